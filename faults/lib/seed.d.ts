export declare const PROBE_TAGS: string[];
export declare const probeAnswer: (tag: string) => string;
export declare const FALLBACK = "Thanks, noted.";
/** Pause between streamed words: every reply streams (typing → partials → complete), short ones stay short. */
export declare const WORD_DELAY_MS = 60;
/** Words of the long "story" reply: STORY_WORDS × WORD_DELAY_MS ≈ 7 s of streaming. */
export declare const STORY_WORDS = 120;
export declare const storyText: () => string;
export interface Seeded {
    companyId: string;
    digitalEmployeeId: string;
}
/** Creates the company and its digital employee in the database `env` points at (migrating it first). */
export declare function seed(env: Record<string, string>): Promise<Seeded>;
