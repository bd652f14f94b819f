/** True when `name` is an executable somewhere on PATH. */
export declare function onPath(name: string, path?: string): boolean;
/** Throws one clear message naming every missing tool and what provides it. */
export declare function requireCommands(tools: Record<string, string>): void;
/** Runs a command and resolves with its stdout; rejects with its stderr in the message. */
export declare function run(command: string, args: string[], timeoutMs?: number): Promise<string>;
