/** Registers an undo step; returns a function that removes it (once the resource was released normally). */
export declare function onCleanup(name: string, run: () => Promise<void>, sync?: () => void): () => void;
/** Runs every registered step, newest first, each bounded in time; errors are reported, never thrown. */
export declare function cleanupAll(): Promise<void>;
/**
 * SIGINT/SIGTERM (Ctrl-C, or the suite runner's time limit) clean up and exit non-zero; a plain `process.exit`
 * with steps still registered runs their synchronous fallbacks.
 */
export declare function installCleanupHandlers(): void;
