import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { searchPath } from './environment.ts';

/** True when `name` is an executable somewhere on PATH. */
export function onPath(name: string, path = searchPath()): boolean {
  return path.split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Throws one clear message naming every missing tool and what provides it. */
export function requireCommands(tools: Record<string, string>): void {
  const missing = Object.entries(tools).filter(([name]) => !onPath(name));
  if (missing.length === 0) return;
  const list = missing.map(([name, from]) => `${name} (${from})`).join(', ');
  throw new Error(`the fault suite needs ${list} on PATH; install them first (e.g. apt-get install ...)`);
}

/** Runs a command and resolves with its stdout; rejects with its stderr in the message. */
export function run(command: string, args: string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}
