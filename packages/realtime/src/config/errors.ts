/** A configuration the engine cannot run with (bad namespace name, unparsable duration, missing key...). */
export class ConfigError extends Error {
  readonly code = 'realtime_config_invalid' as const;

  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
