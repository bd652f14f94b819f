import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Puts a secret file (mode 0600) in place unless one exists, and never half written: the text goes to a file beside
 * it that is then hard-linked to the final name (a link, unlike a rename, fails when the name is taken). False when
 * another process got there first — server workers, or a server and a CLI starting together on an empty folder —
 * whose complete file is then the one to read.
 */
export function createSecretFileOnce(file: string, text: string): boolean {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = writeSecretBeside(file, text);
  try {
    linkSync(temporary, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // Some mounts (FUSE, network shares) refuse hard links: create exclusively instead; EEXIST still means "lost".
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') return createExclusively(file, text);
    throw err;
  } finally {
    rmSync(temporary, { force: true });
  }
}

function createExclusively(file: string, text: string): boolean {
  try {
    writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/**
 * Writes `text` (mode 0600) to a new file beside `file`, unique per process and call, and returns its path: to be
 * linked or renamed into place, so no reader ever sees the file half written.
 */
export function writeSecretBeside(file: string, text: string): string {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
  chmodSync(temporary, 0o600);
  return temporary;
}
