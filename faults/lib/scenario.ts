// The frame every fault scenario runs in: start the cluster, put visitors to work, check that the conversation
// answers before the fault, run the fault, keep the traffic going a little, stop it, let the system settle, then
// read the database and every client's view and print one verdict line. Cleanup always runs.

import { setTimeout as sleep } from 'node:timers/promises';
import { CentrifugeVisitor } from './centrifuge-visitor.ts';
import { cleanupAll, installCleanupHandlers } from './cleanup.ts';
import { type ClusterOptions, type FaultCluster, startCluster } from './cluster.ts';
import type { Figures } from './figures.ts';
import { answersAgain } from './probe.ts';
import { type Verdict, verdictLines } from './report.ts';
import { SdkVisitor } from './sdk-visitor.ts';
import { saveRecords, settle } from './settle.ts';
import { Traffic } from './traffic.ts';
import type { Visitor } from './visitor.ts';

/** The goal: a conversation answers again within this many milliseconds of a fault's end. */
export const ANSWERS_AGAIN_GOAL_MS = 15_000;
/** How long the probe keeps trying before the answer time is reported as "more than this". */
const ANSWERS_AGAIN_BOUND_MS = 30_000;
const WARM_UP_MS = 5_000;
const TRAFFIC_AFTER_FAULT_MS = 5_000;
/** How long the database and the clients may take to settle once the traffic stopped. */
const SETTLE_MS = 20_000;
/** How long sends still being retried when the traffic stops may take to be acknowledged or given up. */
const SENDS_SETTLE_MS = 20_000;
/** A scenario that runs longer than this is stopped (and fails): the suite must always end. */
const SCENARIO_LIMIT_MS = 240_000;

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
  /**
   * A goal of this scenario beyond the common ones, judged at the end from the figures (and what the scenario
   * kept): `check` names what was missed, or returns undefined.
   */
  goal(check: (figures: Figures) => string | undefined): void;
  /** A progress line on stderr, with the seconds since the scenario started. */
  log(text: string): void;
}

export interface ScenarioDefinition {
  name: string;
  /** Centrifuge and SDK visitors chatting throughout (default 4 + 4). */
  visitors?: { centrifuge: number; sdk: number };
  /** How the cluster is built, beyond the defaults (e.g. a node's Redis behind a proxy the fault cuts). */
  cluster?: Omit<ClusterOptions, 'run'>;
  fault(ctx: ScenarioContext): Promise<void>;
}

export async function runScenario(definition: ScenarioDefinition): Promise<never> {
  installCleanupHandlers();
  const started = Date.now();
  const log = (text: string) =>
    process.stderr.write(
      `[${definition.name} ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${text}\n`,
    );
  const limit = setTimeout(() => {
    process.stdout.write(
      `${definition.name}: ERROR still running after ${SCENARIO_LIMIT_MS / 1000} s FAIL\n`,
    );
    void cleanupAll().finally(() => process.exit(1));
  }, SCENARIO_LIMIT_MS);
  limit.unref();

  let exitCode = 1;
  const visitors: Visitor[] = [];
  try {
    const verdict = await execute(definition, visitors, log);
    for (const line of verdictLines(definition.name, verdict)) process.stdout.write(`${line}\n`);
    exitCode = verdict.passed ? 0 : 1;
  } catch (err) {
    process.stdout.write(`${definition.name}: ERROR ${(err as Error).message.split('\n')[0]} FAIL\n`);
  } finally {
    for (const visitor of visitors) visitor.close();
    await cleanupAll();
  }
  process.exit(exitCode);
}

async function execute(
  definition: ScenarioDefinition,
  visitors: Visitor[],
  log: (text: string) => void,
): Promise<Verdict> {
  const cluster = await startCluster({ ...definition.cluster, run: definition.name });
  log(
    `cluster up: ${cluster.nodes.map((n) => `${n.name}:${n.port}`).join(' ')}, balancer ${cluster.balancer.url}`,
  );
  const { traffic, centrifuge } = trafficFor(cluster, definition.visitors ?? { centrifuge: 4, sdk: 4 });
  visitors.push(...traffic.visitors);
  await Promise.all(traffic.visitors.map((v) => v.start()));
  const run = new RunRecord();
  const ctx = contextFor(cluster, visitors, centrifuge, run, log);

  traffic.start();
  await sleep(WARM_UP_MS);
  if ((await answersAgain(ctx.probe, Date.now(), ANSWERS_AGAIN_BOUND_MS)) === null)
    throw new Error('the cluster did not answer before any fault was injected');
  log(`${traffic.sent} messages sent in warm-up; injecting the fault`);

  await definition.fault(ctx);

  await sleep(TRAFFIC_AFTER_FAULT_MS);
  await traffic.stop(SENDS_SETTLE_MS);
  log(`traffic stopped after ${traffic.sent} messages; settling`);
  const figures = await settle(cluster, visitors, SETTLE_MS);
  log(`measured; records in ${await saveRecords(cluster, visitors)}`);

  const alive = await nodesAlive(cluster);
  return {
    figures,
    answersAgainMs: run.answerTimes,
    answersAgainBoundMs: ANSWERS_AGAIN_BOUND_MS,
    answersAgainGoalMs: ANSWERS_AGAIN_GOAL_MS,
    nodesAlive: alive.filter(Boolean).length,
    nodes: cluster.nodes.length,
    problems: [
      ...run.problems,
      ...run.goals.flatMap((check) => check(figures) ?? []),
      ...nodeProblems(cluster, alive),
    ],
    notes: [...run.notes.map((n) => (typeof n === 'string' ? n : n())), ...figureNotes(figures)],
    artifacts: cluster.artifacts,
    passed: false,
  };
}

/** What a scenario adds to its verdict while it runs. */
class RunRecord {
  readonly answerTimes: Array<number | null> = [];
  readonly problems: string[] = [];
  readonly notes: Array<string | (() => string)> = [];
  readonly goals: Array<(figures: Figures) => string | undefined> = [];
}

/** The visitors chatting through the balancer: centrifuge ones first (the probe is the first of them). */
function trafficFor(
  cluster: FaultCluster,
  counts: { centrifuge: number; sdk: number },
): { traffic: Traffic; centrifuge: CentrifugeVisitor[] } {
  const { companyId } = cluster.seeded;
  const url = cluster.balancer.url;
  const centrifuge = Array.from(
    { length: counts.centrifuge },
    (_, i) => new CentrifugeVisitor(`cf-${i + 1}`, url, companyId),
  );
  const sdk = Array.from({ length: counts.sdk }, (_, i) => new SdkVisitor(`sdk-${i + 1}`, url, companyId));
  const traffic = new Traffic([...centrifuge, ...sdk], {
    minIntervalMs: 500,
    maxIntervalMs: 1_000,
    maxInFlight: 3,
  });
  return { traffic, centrifuge };
}

function contextFor(
  cluster: FaultCluster,
  visitors: Visitor[],
  centrifuge: CentrifugeVisitor[],
  run: RunRecord,
  log: (text: string) => void,
): ScenarioContext {
  const probe = centrifuge[0]!;
  const noNodeRuns = () => cluster.nodes.every((n) => !n.running);
  return {
    cluster,
    visitors,
    probe,
    async measureAnswersAgain(t0, visitor = probe) {
      const ms = await answersAgain(visitor, t0, ANSWERS_AGAIN_BOUND_MS, noNodeRuns);
      run.answerTimes.push(ms);
      const never = noNodeRuns()
        ? 'never: no node is running'
        : `not within ${ANSWERS_AGAIN_BOUND_MS / 1000} s`;
      log(ms === null ? `answers again: ${never}` : `answers again after ${ms} ms`);
      return ms;
    },
    async addCentrifugeVisitor(label) {
      const visitor = new CentrifugeVisitor(label, cluster.balancer.url, cluster.seeded.companyId);
      visitors.push(visitor);
      await visitor.start();
      return visitor;
    },
    visitorOnNode(index) {
      return centrifuge.find(
        (v) => v.localPort !== undefined && cluster.balancer.backendOf(v.localPort) === index,
      );
    },
    problem: (text) => {
      run.problems.push(text);
      log(`problem: ${text}`);
    },
    note: (text) => run.notes.push(text),
    goal: (check) => run.goals.push(check),
    log,
  };
}

/** Per node: running, never exited by itself, and answering /healthz now. */
export function nodesAlive(cluster: Pick<FaultCluster, 'nodes'>): Promise<boolean[]> {
  return Promise.all(
    cluster.nodes.map(
      async (n) => n.running && n.unexpectedExits.length === 0 && (await n.answers('/healthz')),
    ),
  );
}

/** Why nodes are not alive: each exit nobody asked for (with the crash from its log), or no /healthz answer. */
export function nodeProblems(cluster: Pick<FaultCluster, 'nodes'>, alive: boolean[]): string[] {
  const problems: string[] = [];
  for (const [i, node] of cluster.nodes.entries()) {
    for (const exit of node.unexpectedExits) {
      const hint = node.errorHint();
      problems.push(
        `${node.name} exited by itself (code ${exit.code}, signal ${exit.signal})${hint ? `: ${hint}` : ''}; log: ${node.logFile}`,
      );
    }
    if (!alive[i] && node.unexpectedExits.length === 0)
      problems.push(`${node.name} does not answer /healthz; log: ${node.logFile}`);
  }
  return problems;
}

const tally = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([reason, n]) => `${n}× "${reason}"`)
    .join(', ');

/** Observations worth printing beside the verdict (they are no goals of their own). */
export function figureNotes(figures: Figures): string[] {
  const notes: string[] = [];
  // Acknowledged messages never shown are a goal of their own (report.ts `missedGoals`); replies are observed.
  if (figures.repliesShown < figures.replies)
    notes.push(`never shown complete by their client: ${figures.replies - figures.repliesShown} reply(ies)`);
  if (figures.unanswered > 0) notes.push(`${figures.unanswered} user message(s) never got a reply`);
  if (figures.extraReplies > 0)
    notes.push(`${figures.extraReplies} reply(ies) more than one per user message in their conversation`);
  if (figures.errored > 0) notes.push(`replies ended with an error block: ${tally(figures.errorCodes)}`);
  if (Object.keys(figures.retriedReasons).length > 0)
    notes.push(`publishes retried after: ${tally(figures.retriedReasons)}`);
  if (Object.keys(figures.gaveUpReasons).length > 0)
    notes.push(
      `gave up (the client shows these sends failed): ${tally(figures.gaveUpReasons)}` +
        (figures.gaveUpButStored > 0 ? `; ${figures.gaveUpButStored} of them were stored anyway` : ''),
    );
  if (figures.unsettled > 0)
    notes.push(
      `${figures.unsettled} send(s) neither acknowledged nor given up when measured (still retrying)`,
    );
  return notes;
}
