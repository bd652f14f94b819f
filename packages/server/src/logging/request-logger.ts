import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString, Logger } from 'pino';

/**
 * Fastify's `childLoggerFactory`: the request's logger (`request.log`, `reply.log`) made only when something logs
 * through it. Fastify otherwise builds a pino child per request (its bindings serialised, its prototype chain set up)
 * although most requests never log a line of their own: the access line is written pre-serialised by
 * packages/server/src/http/access-log.ts, not through it. The first call materialises exactly the child Fastify
 * would have made (same bindings, same options), so every line it writes is unchanged. `parent` is the process's
 * pino logger (packages/server/src/logging/logger.ts), whatever Fastify's types call it.
 */
export function lazyRequestLogger<L>(
  this: unknown,
  parent: L,
  bindings: Bindings,
  options: ChildLoggerOptions,
): L {
  return new RequestLogger(parent as unknown as Logger, bindings, options) as unknown as L;
}

class RequestLogger {
  #child: Logger | undefined;
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): Logger {
    if (this.#child === undefined) this.#child = this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): LevelWithSilentOrString {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#real().level = level;
  }

  isLevelEnabled(level: LevelWithSilentOrString): boolean {
    // Until a level is set on the request's own logger, the parent's decides (pino children inherit it).
    return this.#child !== undefined || this.#options.level !== undefined
      ? this.#real().isLevelEnabled(level)
      : this.#parent.isLevelEnabled(level);
  }

  bindings(): Bindings {
    return this.#real().bindings();
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.#real().child(bindings, options);
  }

  // Prototype methods, not per-instance arrow functions: no closures per request.
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
  silent(): void {}

  #log(level: Level, args: unknown[]): void {
    // A line below the level is dropped without making the child (pino would drop it too).
    if (!this.isLevelEnabled(level)) return;
    const real = this.#real();
    (real[level] as (...a: unknown[]) => void).apply(real, args);
  }
}
