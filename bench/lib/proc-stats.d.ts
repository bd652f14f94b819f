/**
 * CPU time (user + system, all threads) a process has used, in ms, from /proc (Linux); undefined elsewhere. On a
 * machine shared with other work, CPU per unit of work is the figure contention distorts least.
 */
export declare function cpuMs(pid: number): number | undefined;
/**
 * CPU time in ms used so far by `pid` and every process below it (a server that forks workers), from /proc
 * (Linux); a process that has exited counts 0.
 */
export declare function treeCpuMs(pid: number): number;
/** A process's resident set size now, in MiB, from /proc/<pid>/status (`VmRSS`); undefined elsewhere. */
export declare function rssMiB(pid: number): number | undefined;
