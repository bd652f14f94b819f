// The test runner (scripts/test-runner.mjs, behind `npm test`) on fixture files that hang, crash, leak a server or
// are interrupted: each ends as a reported failure naming the file (and the test that was running), the other files
// still report, and the closing `N passed, N failed, N skipped` line is always the last line.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { waitFor } from '@parley/testing/wait';

const root = new URL('..', import.meta.url).pathname;
const fixture = (name: string) => `scripts/test-runner-fixtures/${name}.fixture.ts`;

interface Run {
  code: number | null;
  output: string;
  lastLine: string;
}

function startRunner(options: object, files: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(
    process.execPath,
    [join(root, 'scripts/test-runner-fixtures/run.mjs'), JSON.stringify(options), ...files],
    { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (c) => {
    output += c;
  });
  child.stderr.on('data', (c) => {
    output += c;
  });
  const done = new Promise<Run>((resolve) => {
    child.on('close', (code) => {
      const lines = output.trimEnd().split('\n');
      resolve({ code, output, lastLine: lines.at(-1) ?? '' });
    });
  });
  return { child, done };
}

const run = (options: object, files: string[]) => startRunner(options, files).done;

describe('test runner', () => {
  it('counts passed, failed and skipped tests and exits 0 only when nothing failed', async () => {
    const ok = await run({}, [fixture('passes')]);
    assert.equal(ok.code, 0, ok.output);
    assert.equal(ok.lastLine, '2 passed, 0 failed, 1 skipped');

    const failing = await run({}, [fixture('fails'), fixture('passes')]);
    assert.equal(failing.code, 1, failing.output);
    assert.equal(failing.lastLine, '3 passed, 1 failed, 1 skipped');
    assert.match(failing.output, /── FAIL scripts\/test-runner-fixtures\/fails\.fixture\.ts/);
    assert.match(failing.output, /── ok scripts\/test-runner-fixtures\/passes\.fixture\.ts/);
    // The summary names the failing test and its assertion (CI keeps only the tail of a long run).
    const summary = failing.output.slice(failing.output.lastIndexOf('1 file(s) failed:'));
    assert.match(
      summary,
      /fails\.fixture\.ts \(1 failed\)\n\s+test at .*fails\.fixture\.ts:\d+:\d+\n\s+✖ fails/,
    );
    assert.match(summary, /AssertionError/);
    assert.doesNotMatch(summary, /node:internal/);
  });

  it('fails a file still running at its time-out, naming the test, and lets the next file report', async () => {
    // Long enough for the fixture's process to start and reach its second test on a busy machine.
    const result = await run({ fileTimeoutMs: 12_000 }, [fixture('hangs'), fixture('passes')]);
    assert.equal(result.code, 1, result.output);
    assert.match(
      result.output,
      /✖ scripts\/test-runner-fixtures\/hangs\.fixture\.ts: timed out after 12 s while running: a hanging file > waits forever/,
    );
    // The hanging file's passing test counts, its stop counts as one failure, the next file ran.
    assert.equal(result.lastLine, '3 passed, 1 failed, 1 skipped');
  });

  it('fails a file whose test failed with a server left open, instead of waiting on it', async () => {
    const result = await run({ exitGraceMs: 1_000 }, [fixture('leaks')]);
    assert.equal(result.code, 1, result.output);
    assert.match(result.output, /a failing assertion before the close/);
    assert.match(result.output, /leaks\.fixture\.ts: its tests all ended but the process did not exit/);
    assert.equal(result.lastLine, '0 passed, 2 failed, 0 skipped');
  });

  it('fails a file whose process dies, with its exit status, and lets the next file report', async () => {
    const result = await run({}, [fixture('crashes'), fixture('passes')]);
    assert.equal(result.code, 1, result.output);
    assert.match(
      result.output,
      /crashes\.fixture\.ts: exited with signal SIGKILL and no failing test to show for it/,
    );
    // The killed file's own passing test counts only if its reporter wrote it out before the kill.
    assert.match(result.lastLine, /^[23] passed, 1 failed, 1 skipped$/);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`when interrupted (${signal}), stops the running file, names its test and still prints the closing line`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'runner-'));
      try {
        const marker = join(dir, 'started');
        const eventsDir = join(dir, 'events');
        const runner = startRunner({ eventsDir }, [fixture('waits'), fixture('passes')], {
          RUNNER_FIXTURE_STARTED: marker,
        });
        await waitFor('the fixture test to start', () => existsSync(marker), 20_000);
        // …and the runner to have its start event, which the reporter writes a moment after the test began.
        const events = join(eventsDir, `${fixture('waits').replaceAll('/', '__')}.jsonl`);
        await waitFor(
          'the start event',
          () => existsSync(events) && readFileSync(events, 'utf8').includes('dequeue'),
        );
        runner.child.kill(signal);
        const result = await runner.done;
        assert.equal(result.code, signal === 'SIGINT' ? 130 : 143, result.output);
        assert.match(result.output, /waits\.fixture\.ts: interrupted while running: waits a minute/);
        assert.match(result.output, /interrupted: 1 of 2 file\(s\) not run/);
        assert.equal(result.lastLine, '0 passed, 1 failed, 0 skipped');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
