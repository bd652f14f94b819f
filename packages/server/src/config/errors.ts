import type { ErrorCode } from '../errors/codes.ts';

/** Every problem of a configuration at once (load.ts); its own module so the CLI can tell it apart without the schema. */
export class ConfigError extends Error {
  readonly code = 'invalid_config' satisfies ErrorCode;
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}
