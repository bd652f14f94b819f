/** Directories of PATH, to check that the tools the suite drives are installed. */
export declare const searchPath: () => string;
/**
 * The environment of a child process: the caller's (PATH, HOME, locale…) minus every Parley, database and Redis
 * setting, plus `extra`. CI exports DATABASE_URL and REDIS_URL for the shared services; a fault run must never
 * reach those.
 */
export declare function childEnv(extra: Record<string, string>): Record<string, string>;
