import type { ErrorCode } from '../errors/codes.ts';

/** The parsed options of one call: `--name value` as a string, a flag as `true`. */
export type CommandOptions = Record<string, string | boolean | undefined>;

export interface OptionSpec {
  description: string;
  required?: boolean;
  /** Boolean flags take no value (`--default`). */
  flag?: boolean;
  /**
   * A secret (a password, an API key): besides `--<name> VALUE` it is read from a file with `--<name>-file PATH`, or
   * from standard input with `--<name>-file -`, so it need not appear in the process list (`ps`) or shell history
   * (cli/main.ts `readSecretOption`).
   */
  secret?: boolean;
}

/**
 * One CLI command. `run` returns the result object that `--json` prints as one JSON object; `format` renders it
 * for people. Commands never print secrets except the results that exist to hand a secret over once
 * (`api-clients create`; `channels identity` when a channel gets a new identity secret).
 *
 * `D` is what the command uses: each capability's `*.cli.ts` names the few services it needs, and the CLI
 * (`cli/main.ts`, part of the composition root) hands them over from the services it built. So a capability
 * describes its commands without knowing the root, and this file sits below every capability.
 */
export interface Command<R = unknown, D = never> {
  /** Words after `parley`, e.g. `api-clients create`. */
  name: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** Commands that need no database (e.g. `serve`, `realtime`) are built no services and run with `undefined`. */
  needsContext?: boolean;
  run(options: CommandOptions, deps: D): Promise<R>;
  format?(result: R): string;
}

export class UsageError extends Error {
  readonly code = 'usage' satisfies ErrorCode;
}

export function requireString(options: CommandOptions, name: string): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}
