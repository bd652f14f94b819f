import { readFileSync } from 'node:fs';

/**
 * CPU time (user + system, all threads) a process has used, in ms, from /proc (Linux); undefined elsewhere. On a
 * machine shared with other work, CPU per unit of work is the figure contention distorts least.
 */
export function cpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return undefined;
  }
}

/**
 * CPU time in ms used so far by `pid` and every process below it (a server that forks workers), from /proc
 * (Linux); a process that has exited counts 0.
 */
export function treeCpuMs(pid: number): number {
  const own = cpuMs(pid);
  if (own === undefined) return 0; // exited
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  return own + children.reduce((sum, child) => sum + treeCpuMs(Number(child)), 0);
}

/** A process's resident set size now, in MiB, from /proc/<pid>/status (`VmRSS`); undefined elsewhere. */
export function rssMiB(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}
