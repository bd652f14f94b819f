import { readFileSync } from 'node:fs';
import { UsageError } from '../cli-kit/command.ts';
import { ConfigError } from '../config/errors.ts';
import { MasterKeyError } from '../crypto/master-keys.ts';
import { SealError } from '../crypto/sealing.ts';
import { AppError } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/codes.ts';
import { type AnyCommand, commands } from './commands.ts';
import { PARLEY_VERSION } from './version.ts';

/** Parses `parley <words…> [--option value] [--flag] [--json]` and runs the matching command. Returns the exit code. */
export interface CliOptions {
  /** Environment to read the config from instead of the process's (tests run the CLI in-process this way). */
  env?: Record<string, string | undefined>;
  /** Where messages for people go (errors and their hints); standard error by default. */
  err?: (line: string) => void;
  /** What `--<secret>-file -` reads: standard input unless a test gives its own. */
  readStdin?: () => string;
}

/** Exit codes: 0 done, 1 the command failed, 2 the command line itself is wrong (usage). */
const USAGE_EXIT = 2;

export async function runCli(
  argv: string[],
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  cliOptions: CliOptions = {},
): Promise<number> {
  const err = cliOptions.err ?? ((l) => process.stderr.write(`${l}\n`));
  const json = argv.includes('--json');
  const args = argv.filter((a) => a !== '--json');
  const help = args.includes('--help') || args.includes('-h');
  const refuse = (message: string, hint: string) => {
    if (json) out(JSON.stringify({ error: { code: 'usage', message } }));
    else err(`parley: ${message}\n${hint}`);
    return USAGE_EXIT;
  };
  if (args[0] === '--version' || args[0] === '-v') {
    out(json ? JSON.stringify({ version: PARLEY_VERSION }) : `parley ${PARLEY_VERSION}`);
    return 0;
  }
  if (args.length === 0 || args[0] === 'help' || (help && args[0]?.startsWith('-'))) {
    out(overview());
    return 0;
  }
  const command = findCommand(args);
  if (command && help) {
    out(commandHelp(command));
    return 0;
  }
  if (!command) {
    const problem = unknownCommand(args);
    if (help && problem.group) {
      out(groupHelp(problem.group));
      return 0;
    }
    return refuse(problem.message, problem.hint);
  }
  try {
    const options = parseOptions(
      command,
      args.slice(command.name.split(' ').length),
      cliOptions.readStdin ?? (() => readFileSync(0, 'utf8')),
    );
    const result = await runCommand(command, options, cliOptions.env);
    if (result !== undefined)
      out(json ? JSON.stringify(result) : (command.format?.(result) ?? JSON.stringify(result, null, 2)));
    return 0;
  } catch (error) {
    if (error instanceof UsageError)
      return refuse(error.message, `Run "parley ${command.name} --help" for its options.`);
    const { code, message } = describeError(error);
    if (json) out(JSON.stringify({ error: { code, message } }));
    else err(`parley: ${message}`);
    return 1;
  }
}

async function runCommand(
  command: AnyCommand,
  options: Record<string, string | boolean | undefined>,
  env: Record<string, string | undefined> | undefined,
): Promise<unknown> {
  if (command.needsContext === false) return command.run(options, undefined);
  // Loaded here, not when `parley` starts: `--version`, `--help`, a usage error and `serve` (which loads its own)
  // need neither the config schema nor the services (docs/architecture.md "Start-up and shutdown": the CLI's cost).
  const [{ loadConfig }, { createLogger }, { createContext }] = await Promise.all([
    import('../config/load.ts'),
    import('../logging/logger.ts'),
    import('../context.ts'),
  ]);
  const config = loadConfig(env);
  // The CLI logs only warnings (to stderr) so its stdout stays one parseable result.
  const logger = createLogger(config.logLevel === 'silent' ? 'silent' : 'warn', process.stderr);
  const ctx = await createContext(config, logger);
  try {
    return await command.run(options, ctx);
  } finally {
    await ctx.close();
  }
}

function findCommand(args: string[]): AnyCommand | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  return [...commands]
    .sort((a, b) => b.name.split(' ').length - a.name.split(' ').length)
    .find((c) => c.name.split(' ').every((w, i) => args[i] === w && words[i] === w));
}

function parseOptions(
  command: AnyCommand,
  rest: string[],
  readStdin: () => string,
): Record<string, string | boolean | undefined> {
  const options: Record<string, string | boolean | undefined> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const [given, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const secretFile = secretFileOption(command, given);
    const name = secretFile ?? given;
    const spec = command.options[name];
    if (!spec) throw new UsageError(`unknown option --${given} for "${command.name}"`);
    if (name in options) throw new UsageError(`--${name} given twice (or with --${name}-file)`);
    if (spec.flag) {
      options[name] = true;
      continue;
    }
    const value = inline ?? rest[++i];
    if (value === undefined) throw new UsageError(`--${given} needs a value`);
    options[name] = secretFile ? readSecretOption(given, value, readStdin) : value;
  }
  for (const [name, spec] of Object.entries(command.options)) {
    if (spec.required && options[name] === undefined) {
      throw new UsageError(`--${name} is required${spec.secret ? ` (or --${name}-file)` : ''}`);
    }
  }
  return options;
}

/** `password` for `password-file` when `--password` is a secret option of the command. */
function secretFileOption(command: AnyCommand, given: string): string | undefined {
  if (!given.endsWith('-file')) return undefined;
  const name = given.slice(0, -'-file'.length);
  return command.options[name]?.secret ? name : undefined;
}

/**
 * A secret option's value from the file `path`, or from standard input for `-`: the whole content, less one final
 * line break (what `echo` and editors add; anything else, spaces included, is part of the secret). Never echoed.
 */
function readSecretOption(option: string, path: string, readStdin: () => string): string {
  const source = path === '-' ? 'standard input' : path;
  let content: string;
  try {
    content = path === '-' ? readStdin() : readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--${option}: cannot read ${source} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
  const value = content.replace(/\r?\n$/, '');
  if (value === '') throw new UsageError(`--${option}: ${source} is empty`);
  return value;
}

/** The `{code, message}` the CLI prints: only documented codes (errors/codes.ts); anything else is internal. */
function describeError(err: unknown): { code: ErrorCode; message: string } {
  if (err instanceof AppError) return { code: err.code, message: err.detail };
  if (
    err instanceof UsageError ||
    err instanceof ConfigError ||
    err instanceof MasterKeyError ||
    err instanceof SealError
  ) {
    return { code: err.code, message: err.message };
  }
  return { code: 'internal_error', message: err instanceof Error ? err.message : String(err) };
}

/** What was wrong with a command line that names no command: an unknown word, or a group without its action. */
function unknownCommand(args: string[]): { message: string; hint: string; group?: string } {
  const [first = '', second] = args;
  if (first.startsWith('-'))
    return {
      message: `unknown option ${first}`,
      hint: 'Run "parley --help" for the commands and their use.',
    };
  const group = commands.filter((c) => c.name.startsWith(`${first} `));
  if (group.length > 0) {
    const actions = group.map((c) => c.name.slice(first.length + 1)).join(', ');
    const hint = `Run "parley ${first} --help" for details.`;
    return second === undefined || second.startsWith('-')
      ? { message: `"${first}" needs one of: ${actions}`, hint, group: first }
      : { message: `unknown command "${first} ${second}"; "${first}" has: ${actions}`, hint, group: first };
  }
  const words = [...new Set(commands.map((c) => c.name.split(' ')[0]!))];
  const near = words.filter((w) => editDistance(w, first) <= 2);
  return {
    message: `unknown command "${first}"${near.length > 0 ? ` (did you mean ${near.map((w) => `"${w}"`).join(' or ')}?)` : ''}`,
    hint: 'Run "parley --help" for the list of commands.',
  };
}

/** Levenshtein distance, for "did you mean" on a mistyped command word (a handful of short words). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length]!;
}

function overview(): string {
  return [
    `parley ${PARLEY_VERSION}: run and administer a Parley server`,
    '',
    'usage: parley <command> [options] [--json]',
    '',
    'commands:',
    ...commandList(commands),
    '',
    'options of every command:',
    '  --json         print the result (or the error) as one JSON object',
    '  --help, -h     explain the command and its options',
    '  --version, -v  print the version',
    '',
    'Configuration comes from environment variables (docs/config.md); the data folder is found from any working',
    'directory (PARLEY_DATA_DIR).',
  ].join('\n');
}

function commandList(list: readonly AnyCommand[]): string[] {
  const width = Math.max(...list.map((c) => c.name.length)) + 2;
  return list.map((c) => `  ${c.name.padEnd(width)}${c.summary}`);
}

function groupHelp(group: string): string {
  const members = commands.filter((c) => c.name.startsWith(`${group} `));
  return [
    `usage: parley ${group} <${members.map((c) => c.name.slice(group.length + 1)).join('|')}> [options] [--json]`,
    '',
    ...commandList(members),
    '',
    `Run "parley ${group} <command> --help" for a command's options.`,
  ].join('\n');
}

function commandHelp(command: AnyCommand): string {
  const options = Object.entries(command.options);
  const synopsis = options
    .map(([n, s]) => {
      const text = `--${n}${s.flag ? '' : ' <value>'}`;
      return s.required ? text : `[${text}]`;
    })
    .join(' ');
  const rows = [
    ...options.flatMap(([n, s]) => [
      [`--${n}${s.flag ? '' : ' <value>'}`, `${s.description}${s.required ? ' (required)' : ''}`],
      ...(s.secret
        ? [[`--${n}-file <path|->`, 'the same, read from a file, or from standard input with -']]
        : []),
    ]),
    ['--json', 'print the result (or the error) as one JSON object'],
    ['--help, -h', 'show this help'],
  ];
  const width = Math.max(...rows.map(([left]) => left!.length)) + 2;
  return [
    `usage: parley ${command.name}${synopsis ? ` ${synopsis}` : ''} [--json]`,
    '',
    `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`,
    '',
    'options:',
    ...rows.map(([left, right]) => `  ${left!.padEnd(width)}${right}`),
  ].join('\n');
}
