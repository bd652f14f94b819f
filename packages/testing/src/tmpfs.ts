// A small file system that really fills up, for disk-full tests (packages/server/src/storage/disk-full.test.ts) and the fault suite's
// disk-full scenario: a tmpfs of a few MiB, mounted on a fresh folder. Mounting one needs root.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether this process may mount a tmpfs (root). */
export const canMountTmpfs = (): boolean => process.getuid?.() === 0;

export interface Tmpfs {
  /** Where it is mounted. */
  dir: string;
  /** Writes a filler file until the file system has no byte left. */
  fill(): void;
  /** Removes the filler: the space is back. */
  free(): void;
  /** Unmounts it and removes the folder (once; later calls do nothing). */
  unmount(): void;
}

export function mountTmpfs(sizeMiB: number, prefix = 'parley-tmpfs-'): Tmpfs {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', dir], {
    timeout: 10_000,
  });
  const filler = join(dir, 'filler');
  let mounted = true;
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      try {
        // Large blocks first, then single bytes: not even a byte is left for SQLite's journal.
        for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
          const block = Buffer.alloc(size);
          for (;;) {
            try {
              writeSync(fd, block);
            } catch {
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      if (!mounted) return;
      mounted = false;
      // A lazy unmount: a process that still holds a file open there (a node that did not exit) cannot block it.
      execFileSync('umount', ['-l', dir], { timeout: 10_000 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
