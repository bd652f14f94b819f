import { CentrifugeVisitor } from './centrifuge-visitor.ts';
import { type ClusterOptions, type FaultCluster } from './cluster.ts';
import type { Figures } from './figures.ts';
import type { Visitor } from './visitor.ts';
/** The goal: a conversation answers again within this many milliseconds of a fault's end. */
export declare const ANSWERS_AGAIN_GOAL_MS = 15000;
export interface ScenarioContext {
    cluster: FaultCluster;
    visitors: Visitor[];
    /** The centrifuge visitor that probes "answers again" unless a scenario picks another. */
    probe: CentrifugeVisitor;
    /** Measures "answers again" from `t0` in `visitor`'s conversation (default: the probe's) and keeps the worst. */
    measureAnswersAgain(t0: number, visitor?: CentrifugeVisitor): Promise<number | null>;
    /** A started centrifuge visitor outside the regular traffic (its figures count like the others'). */
    addCentrifugeVisitor(label: string): Promise<CentrifugeVisitor>;
    /** A centrifuge visitor of the traffic whose WebSocket is on node `index` right now. */
    visitorOnNode(index: number): CentrifugeVisitor | undefined;
    /** A goal missed that the figures do not show (e.g. a non-zero exit code after SIGTERM). */
    problem(text: string): void;
    /** An observation printed with the verdict; a function is asked at the end, after the system settled. */
    note(text: string | (() => string)): void;
    /** A progress line on stderr, with the seconds since the scenario started. */
    log(text: string): void;
}
export interface ScenarioDefinition {
    name: string;
    /** Centrifuge and SDK visitors chatting throughout (default 4 + 4). */
    visitors?: {
        centrifuge: number;
        sdk: number;
    };
    /** How the cluster is built, beyond the defaults (e.g. a node's Redis behind a proxy the fault cuts). */
    cluster?: Omit<ClusterOptions, 'run'>;
    fault(ctx: ScenarioContext): Promise<void>;
}
export declare function runScenario(definition: ScenarioDefinition): Promise<never>;
/** Per node: running, never exited by itself, and answering /healthz now. */
export declare function nodesAlive(cluster: FaultCluster): Promise<boolean[]>;
/** Why nodes are not alive: each exit nobody asked for (with the crash from its log), or no /healthz answer. */
export declare function nodeProblems(cluster: FaultCluster, alive: boolean[]): string[];
/** Observations worth printing beside the verdict (they are no goals of their own). */
export declare function figureNotes(figures: Figures): string[];
