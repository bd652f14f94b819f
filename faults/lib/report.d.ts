import type { Figures } from './figures.ts';
export interface Verdict {
    figures: Figures;
    /** Every "answers again" measurement of the run (null: not within the bound). */
    answersAgainMs: Array<number | null>;
    answersAgainBoundMs: number;
    answersAgainGoalMs: number;
    nodesAlive: number;
    nodes: number;
    /** Goals missed that the figures do not show. */
    problems: string[];
    notes: string[];
    /** The run's logs and records, named when the verdict fails. */
    artifacts: string;
    passed: boolean;
}
/** The reasons a verdict fails; empty when every goal is met. */
export declare function missedGoals(v: Verdict): string[];
/** Detail lines (why it failed, what was noticed), then the one summary line. Sets `passed`. */
export declare function verdictLines(name: string, v: Verdict): string[];
