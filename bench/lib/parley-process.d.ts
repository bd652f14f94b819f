import { type ChildProcess } from 'node:child_process';
import type { LoadResult } from './http-load.ts';
/**
 * The fields of an autocannon result the benches read (autocannon ships no type declarations); the lean generator
 * in http-load.ts answers with the same shape.
 */
export type AutocannonResult = LoadResult;
export type BenchEnv = Record<string, string | undefined>;
export declare const repoRoot: string;
/** Resolves once `url` answers; a child that does not come up is stopped, so a failed start leaves nothing running. */
export declare function waitForUp(child: ChildProcess, url: string): Promise<ChildProcess>;
export declare function stop(child: ChildProcess): Promise<void>;
/** The environment of a Parley on 127.0.0.1:`port` with SQLite in `dataDir` (no PostgreSQL, no Redis). */
export declare function parleyEnv(port: number, dataDir: string, extra: BenchEnv): BenchEnv;
/** Runs `parley <args> --json` in-process against `env`'s data dir and returns its parsed JSON output. */
export declare function parleyCli(env: BenchEnv, args: string[]): Promise<Record<string, string>>;
/** A company "Bench" and an API client "bench" allowed to write and read connectors. */
export declare function createBenchClient(env: BenchEnv): Promise<{
    company: Record<string, string>;
    client: Record<string, string>;
}>;
/** `parley serve` in production mode, resolved once /readyz answers. */
export declare function startParleyProcess(env: BenchEnv, port: number): Promise<ChildProcess>;
/** Throws when a load run saw anything but 2xx answers: its figures would not be those of the path measured. */
export declare function assertClean(name: string, r: LoadResult): void;
/** An HTTP Basic authorization header value (RFC 7617). */
export declare const basicAuth: (user: string, password: string) => string;
/** A number right-aligned in a 9-wide table cell. */
export declare const fmt: (n: number, digits?: number) => string;
