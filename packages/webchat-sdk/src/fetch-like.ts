/** `fetch` as the SDK calls it (tests and other runtimes hand their own). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;
