// The one place in faults/ that reads the environment: the child processes it starts get a copy of it without
// anything that could point them at the shared PostgreSQL or Redis.

/** Directories of PATH, to check that the tools the suite drives are installed. */
export const searchPath = (): string => process.env.PATH ?? '';

/**
 * The environment of a child process: the caller's (PATH, HOME, locale…) minus every Parley, database and Redis
 * setting, plus `extra`. CI exports DATABASE_URL and REDIS_URL for the shared services; a fault run must never
 * reach those.
 */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(PARLEY_|DATABASE_URL|REDIS_URL|PG[A-Z]*$|NODE_ENV$|LOG_LEVEL$|PORT$|HOST$)/.test(key)) continue;
    base[key] = value;
  }
  return { ...base, ...extra };
}
