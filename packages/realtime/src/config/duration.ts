import { ConfigError } from './errors.ts';

/**
 * A duration as Centrifugo writes it in config ("300s", "1h30m", "500ms", Go `time.ParseDuration` syntax) or a
 * number of milliseconds.
 */
export type DurationInput = string | number;

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const SEGMENT = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Parses Go duration syntax into milliseconds (fractions of a millisecond are kept). */
export function parseGoDuration(text: string): number {
  let input = text.trim();
  let sign = 1;
  if (input.startsWith('-') || input.startsWith('+')) {
    if (input[0] === '-') sign = -1;
    input = input.slice(1);
  }
  if (input === '0') return 0;
  if (input === '') throw new ConfigError(`invalid duration "${text}"`);
  let total = 0;
  SEGMENT.lastIndex = 0;
  while (SEGMENT.lastIndex < input.length) {
    const match = SEGMENT.exec(input);
    if (match === null) throw new ConfigError(`invalid duration "${text}" (use e.g. "300s", "1h", "500ms")`);
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
  }
  return sign * total;
}

/** Milliseconds from a duration string or a millisecond number; `undefined` stays `undefined`. */
export function toMilliseconds(value: DurationInput | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ConfigError(`${name} must be a finite number of milliseconds`);
    return value;
  }
  if (typeof value !== 'string') throw new ConfigError(`${name} must be a duration string or milliseconds`);
  try {
    return parseGoDuration(value);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
}
