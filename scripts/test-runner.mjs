// Runs test files each in its own process (node's test runner in the file's process: `node <bundle>` for a file the
// run compiled, scripts/test-build.mjs, else `node --import tsx <file>`),
// a pool of `concurrency` at a time (node 20's own `--test` runner times out only whole files, without naming the
// test, and holds later files' output behind a stuck one), and turns every way a file can go wrong into a reported failure instead of a
// stalled run:
// - a file still running after `fileTimeoutMs` is killed (its whole process group) and fails, naming the test that
//   was running;
// - a file whose tests have all ended but whose process does not exit within `exitGraceMs` (a server, socket, child
//   process or timer left open) is killed and fails, saying so;
// - a file that crashes (non-zero exit with no failing test to show for it: a throw at load, process.exit, a signal)
//   fails with its exit status;
// - SIGINT/SIGTERM to the runner stops the running files and still prints what ran.
// Each file's output (the spec reporter and anything the file printed) is printed as one block when it ends, so
// parallel files never interleave. The last line is always `N passed, N failed, N skipped` (what CI reads).
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const here = new URL('.', import.meta.url).pathname;
const eventsReporter = join(here, 'test-events-reporter.mjs');
/** How often a running file's events are read (to notice that its tests have all ended). */
const POLL_MS = 250;
/** After SIGTERM to a file's process group, how long before SIGKILL. */
const KILL_GRACE_MS = 3_000;

/**
 * @typedef {{
 *   file: string, passed: number, failed: number, skipped: number, durationMs: number,
 *   problem?: string, output: string
 * }} FileResult
 */

/** Reads a growing JSON-lines file from where the previous read stopped. */
class EventTail {
  constructor(path) {
    this.path = path;
    this.offset = 0;
    this.rest = '';
  }
  read() {
    let fd;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return [];
    }
    const events = [];
    try {
      const buffer = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buffer, 0, buffer.length, this.offset);
        if (n === 0) break;
        this.offset += n;
        this.rest += buffer.subarray(0, n).toString('utf8');
      }
    } finally {
      closeSync(fd);
    }
    const lines = this.rest.split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line) continue;
      try {
        events.push(JSON.parse(line));
      } catch {
        // A torn line cannot happen with whole-line writes; ignore rather than fail the run over the reporter.
      }
    }
    return events;
  }
}

/** What one file's events say: counts, which tests are running, whether every top-level test has ended. */
class FileProgress {
  constructor() {
    this.passed = 0;
    this.failed = 0;
    this.skipped = 0;
    this.topEnqueued = 0;
    this.topCompleted = 0;
    /** @type {{ nesting: number, name: string, path: string[] }[]} */
    this.running = [];
  }
  apply(event) {
    switch (event.type) {
      case 'test:enqueue':
        if (event.nesting === 0) this.topEnqueued++;
        break;
      case 'test:dequeue': {
        const parent = this.running.findLast((r) => r.nesting === event.nesting - 1);
        this.running.push({
          nesting: event.nesting,
          name: event.name,
          path: [...(parent?.path ?? []), event.name],
        });
        break;
      }
      case 'test:complete': {
        if (event.nesting === 0) this.topCompleted++;
        const i = this.running.findLastIndex((r) => r.nesting === event.nesting && r.name === event.name);
        if (i >= 0) this.running.splice(i, 1);
        break;
      }
      case 'test:pass':
        if (event.suite) break;
        if (event.skip || event.todo) this.skipped++;
        else this.passed++;
        break;
      case 'test:fail':
        if (!event.suite) this.failed++;
        break;
      default:
        break;
    }
  }
  /** True once every top-level test that was declared has ended. */
  get finished() {
    return this.topEnqueued > 0 && this.topCompleted >= this.topEnqueued && this.running.length === 0;
  }
  /** The innermost running tests, as "suite > test" paths. */
  get runningNames() {
    return this.running
      .filter((r) => !this.running.some((o) => o.nesting === r.nesting + 1 && o.path[r.nesting] === r.name))
      .map((r) => r.path.join(' > '));
  }
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Runs one file. `stop` (an AbortSignal) ends it early, as an interrupted run does.
 * @returns {Promise<FileResult>}
 */
export function runFile(file, options) {
  const { root, env, fileTimeoutMs, exitGraceMs, eventsDir, signal, bundles } = options;
  const eventsFile = join(eventsDir, `${file.replaceAll('/', '__')}.jsonl`);
  rmSync(eventsFile, { force: true });
  const started = Date.now();
  // The file's bundle when the run compiled one (scripts/test-build.mjs), its TypeScript through `tsx` otherwise.
  const bundle = bundles?.get(file);
  const args = [
    ...(bundle ? ['--enable-source-maps'] : ['--import', 'tsx']),
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${eventsReporter}`,
    `--test-reporter-destination=${eventsFile}`,
    bundle ?? file,
  ];
  return new Promise((resolve) => {
    // Its own process group, so a time-out or an interrupt also ends what the file started (servers, CLIs).
    const child = spawn(process.execPath, args, {
      cwd: root,
      // Run as a top-level test process even when this runner itself runs under node's test runner (its own tests).
      env: { ...env, NODE_TEST_CONTEXT: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    const tail = new EventTail(eventsFile);
    const progress = new FileProgress();
    let problem;
    let finishedAt;
    let killTimer;
    const stop = (why) => {
      if (problem !== undefined) return;
      problem = why;
      killGroup(child, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS);
    };
    const poll = setInterval(() => {
      for (const e of tail.read()) progress.apply(e);
      if (progress.finished) finishedAt ??= Date.now();
      else finishedAt = undefined;
      if (finishedAt !== undefined && Date.now() - finishedAt >= exitGraceMs) {
        stop(
          `its tests all ended but the process did not exit within ${exitGraceMs / 1000} s: something was left ` +
            'open (a server, socket, child process, interval or timer)',
        );
      }
    }, POLL_MS);
    const timeout = setTimeout(() => {
      for (const e of tail.read()) progress.apply(e);
      const running = progress.runningNames;
      stop(
        `timed out after ${fileTimeoutMs / 1000} s` +
          (running.length > 0 ? ` while running: ${running.join('; ')}` : ' (no test was running)'),
      );
    }, fileTimeoutMs);
    const onAbort = () => {
      for (const e of tail.read()) progress.apply(e);
      const running = progress.runningNames;
      stop(`interrupted${running.length > 0 ? ` while running: ${running.join('; ')}` : ''}`);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('close', (code, exitSignal) => {
      clearInterval(poll);
      clearTimeout(timeout);
      clearTimeout(killTimer);
      signal?.removeEventListener('abort', onAbort);
      // Whatever the process left behind (a test that outlived a time-out) ends with it.
      killGroup(child, 'SIGKILL');
      for (const e of tail.read()) progress.apply(e);
      if (problem === undefined && code !== 0 && progress.failed === 0) {
        problem = `exited with ${code === null ? `signal ${exitSignal}` : `code ${code}`} and no failing test to show for it`;
      }
      rmSync(eventsFile, { force: true });
      resolve({
        file,
        passed: progress.passed,
        // A file stopped or crashed counts as one failure besides its failing tests.
        failed: progress.failed + (problem === undefined ? 0 : 1),
        skipped: progress.skipped,
        durationMs: Date.now() - started,
        problem,
        output: Buffer.concat(chunks).toString('utf8'),
      });
    });
  });
}

function formatBlock(result) {
  const verdict = result.failed > 0 ? 'FAIL' : 'ok';
  const head = `── ${verdict} ${result.file} (${(result.durationMs / 1000).toFixed(1)} s)`;
  const output = result.output.trimEnd();
  const lines = [head];
  if (output) lines.push(output);
  if (result.problem) lines.push(`✖ ${result.file}: ${result.problem}`);
  return `${lines.join('\n')}\n`;
}

/**
 * The spec reporter's "failing tests" section of a file's output without node's own stack frames, at most
 * `maxLines` lines: repeated in the summary because CI keeps only the tail of a long run's output, and a failure seen
 * once on a loaded machine must be readable from there.
 */
export function failureDigest(output, maxLines = 40) {
  const start = output.lastIndexOf('✖ failing tests:');
  if (start === -1) return [];
  const lines = output
    .slice(start + '✖ failing tests:'.length)
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(
      (l) => l !== '' && !/^\s+at .*\((node:|file:\/\/\/.*node_modules)/.test(l) && !/^\s+at async /.test(l),
    );
  return lines.length > maxLines
    ? [...lines.slice(0, maxLines), `… ${lines.length - maxLines} more line(s) above`]
    : lines;
}

/** `N passed, N failed, N skipped`: the closing line CI reads. */
export function closingLine(results) {
  const sum = (k) => results.reduce((n, r) => n + r[k], 0);
  return `${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`;
}

/**
 * Runs `files` with a pool of `concurrency`, printing each file's block as it ends, and the summary and closing line
 * at the end, also when `signal` aborts the run. Longest files (by `durations`, from an earlier run) start first so
 * the run does not end waiting on one long file. Resolves to the results and whether the run was interrupted.
 */
export async function runFiles(files, options) {
  const { concurrency, signal, durations = {}, write = (s) => process.stdout.write(s) } = options;
  mkdirSync(options.eventsDir, { recursive: true });
  const known = files.filter((f) => durations[f] !== undefined).sort((a, b) => durations[b] - durations[a]);
  const queue = [...files.filter((f) => durations[f] === undefined), ...known];
  const results = [];
  const worker = async () => {
    while (queue.length > 0 && !signal?.aborted) {
      const file = queue.shift();
      const result = await runFile(file, options);
      results.push(result);
      write(formatBlock(result));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, files.length)) }, worker));
  rmSync(options.eventsDir, { recursive: true, force: true });
  const interrupted = signal?.aborted === true;
  const failed = results.filter((r) => r.failed > 0);
  const summary = [''];
  if (failed.length > 0) {
    summary.push(`${failed.length} file(s) failed:`);
    for (const r of failed) {
      summary.push(`  ${r.file}${r.problem ? `: ${r.problem}` : ` (${r.failed} failed)`}`);
      for (const line of failureDigest(r.output)) summary.push(`    ${line}`);
    }
  }
  if (interrupted) summary.push(`interrupted: ${queue.length} of ${files.length} file(s) not run`);
  summary.push(closingLine(results));
  write(`${summary.join('\n')}\n`);
  return { results, interrupted };
}

/**
 * The whole run as `npm test` does it: SIGINT/SIGTERM stop it (the running files are killed and reported), the
 * durations are kept for the next run's order. Resolves to the exit code (130/143 when interrupted).
 */
export async function runMain(files, options) {
  const interrupt = new AbortController();
  let signalled;
  const onSignal = (name) => {
    signalled ??= name;
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // This machine's last run, over the durations committed with the repository (a fresh clone, CI).
  const durations = {
    ...(options.durationsSeedFile ? readDurations(options.durationsSeedFile) : {}),
    ...(options.durationsFile ? readDurations(options.durationsFile) : {}),
  };
  const { results, interrupted } = await runFiles(files, { ...options, durations, signal: interrupt.signal });
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  if (interrupted) return signalled === 'SIGTERM' ? 143 : 130;
  if (options.durationsFile) writeDurations(options.durationsFile, durations, results);
  return results.some((r) => r.failed > 0) ? 1 : 0;
}

/** Durations (ms) of each file's last run, to start the longest first next time. */
function readDurations(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
}

function writeDurations(path, previous, results) {
  const next = { ...previous };
  for (const r of results) if (r.problem === undefined) next[r.file] = r.durationMs;
  try {
    writeFileSync(path, `${JSON.stringify(next, null, 1)}\n`);
  } catch {
    // Only an ordering hint.
  }
}
