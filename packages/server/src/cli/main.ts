import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../config/load.ts';
import { createContext } from '../context.ts';
import { MasterKeyError } from '../crypto/master-keys.ts';
import { SealError } from '../crypto/sealing.ts';
import { AppError } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/codes.ts';
import { createLogger } from '../logging/logger.ts';
import { type Command, UsageError } from './command.ts';
import { commands } from './commands.ts';

/** Parses `parley <words…> [--option value] [--flag] [--json]` and runs the matching command. Returns the exit code. */
export interface CliOptions {
  /** Environment to read the config from instead of the process's (tests run the CLI in-process this way). */
  env?: Record<string, string | undefined>;
  /** What `--<secret>-file -` reads: standard input unless a test gives its own. */
  readStdin?: () => string;
}

export async function runCli(
  argv: string[],
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  cliOptions: CliOptions = {},
): Promise<number> {
  const json = argv.includes('--json');
  const args = argv.filter((a) => a !== '--json');
  const command = findCommand(args);
  if (!command || args.includes('--help') || args.includes('-h')) {
    out(usage(command));
    return command || args.length === 0 || args.includes('--help') ? 0 : 2;
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
  } catch (err) {
    const { code, message } = describeError(err);
    if (json) out(JSON.stringify({ error: { code, message } }));
    else process.stderr.write(`parley: ${message}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}

async function runCommand(
  command: Command,
  options: Record<string, string | boolean | undefined>,
  env: Record<string, string | undefined> | undefined,
): Promise<unknown> {
  if (command.needsContext === false) return command.run(options, undefined);
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

function findCommand(args: string[]): Command | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  return [...commands]
    .sort((a, b) => b.name.split(' ').length - a.name.split(' ').length)
    .find((c) => c.name.split(' ').every((w, i) => args[i] === w && words[i] === w));
}

function parseOptions(
  command: Command,
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
function secretFileOption(command: Command, given: string): string | undefined {
  if (!given.endsWith('-file')) return undefined;
  const name = given.slice(0, -'-file'.length);
  return command.options[name]?.secret ? name : undefined;
}

/**
 * A secret option's value from the file `path`, or from standard input for `-`: the whole content, less one final
 * line break (what `echo` and editors add; anything else, spaces included, is part of the secret). Never echoed.
 */
function readSecretOption(option: string, path: string, readStdin: () => string): string {
  let content: string;
  try {
    content = path === '-' ? readStdin() : readFileSync(path, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new UsageError(`--${option}: cannot read ${path === '-' ? 'standard input' : path} (${reason})`);
  }
  const value = content.replace(/\r?\n$/, '');
  if (value === '') throw new UsageError(`--${option}: ${path === '-' ? 'standard input' : path} is empty`);
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

function usage(command?: Command): string {
  if (command) {
    const opts = Object.entries(command.options).flatMap(([n, s]) => [
      `  --${n}${s.flag ? '' : ' <value>'}${s.required ? ' (required)' : ''}  ${s.description}`,
      ...(s.secret
        ? [`  --${n}-file <path|->  the same, read from a file, or from standard input with -`]
        : []),
    ]);
    return [
      `parley ${command.name} — ${command.summary}`,
      ...opts,
      '  --json  print the result as one JSON object',
    ].join('\n');
  }
  return [
    'usage: parley <command> [options] [--json]',
    '',
    ...commands.map((c) => `  ${c.name.padEnd(28)} ${c.summary}`),
  ].join('\n');
}
