// Everything a fault run starts (PostgreSQL cluster, Redis, Parley nodes, the balancer) registers how to undo it
// here, so a failure, an exception or Ctrl-C never leaves a private cluster or a stray process behind.

interface CleanupAction {
  name: string;
  run: () => Promise<void>;
  /** A blocking last resort for the `exit` event, when the async cleanup could not run (process.exit mid-run). */
  sync?: () => void;
}

const actions: CleanupAction[] = [];
let running: Promise<void> | null = null;

/** Registers an undo step; returns a function that removes it (once the resource was released normally). */
export function onCleanup(name: string, run: () => Promise<void>, sync?: () => void): () => void {
  const action: CleanupAction = { name, run, sync };
  actions.push(action);
  return () => {
    const at = actions.indexOf(action);
    if (at >= 0) actions.splice(at, 1);
  };
}

/** Runs every registered step, newest first, each bounded in time; errors are reported, never thrown. */
export function cleanupAll(): Promise<void> {
  running ??= (async () => {
    while (actions.length > 0) {
      const action = actions.pop()!;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          action.run(),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error('timed out after 30 s')), 30_000);
          }),
        ]);
      } catch (err) {
        process.stderr.write(`cleanup of ${action.name} failed: ${(err as Error).message}\n`);
        try {
          action.sync?.();
        } catch {
          // the sync fallback is best effort; its failure was reported above
        }
      } finally {
        clearTimeout(timer);
      }
    }
  })();
  return running;
}

/**
 * SIGINT/SIGTERM (Ctrl-C, or the suite runner's time limit) clean up and exit non-zero; a plain `process.exit`
 * with steps still registered runs their synchronous fallbacks.
 */
export function installCleanupHandlers(): void {
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: cleaning up\n`);
    void cleanupAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', () => {
    for (const action of actions.splice(0).reverse()) {
      try {
        action.sync?.();
      } catch {
        // nothing more can be done while exiting
      }
    }
  });
}
