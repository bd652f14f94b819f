// Secret rotation under load (issue 26): 200 API clients request tokens continuously through the balancer while
// each rotates its secret (the old one keeps working: overlap) and then revokes the old one. Goals: 0 failed
// requests with a secret that was valid for the whole request, 0 accepted requests with a revoked secret, both
// nodes alive; the whole drill within DRILL_LIMIT_MS. Rotation and revocation go through the same service the
// CLI and the portal call (packages/server/src/oauth/api-clients.service.ts), in this process, against the
// private PostgreSQL; the nodes learn of them only through the store.
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../packages/server/src/config/load.ts';
import { type AppContext, createContext } from '../../packages/server/src/context.ts';
import { createLogger } from '../../packages/server/src/logging/logger.ts';
import { cleanupAll, installCleanupHandlers, onCleanup } from '../lib/cleanup.ts';
import { type FaultCluster, startCluster } from '../lib/cluster.ts';
import { nodeProblems, nodesAlive } from '../lib/scenario.ts';

const NAME = 'rotation-drill';
const CLIENTS = 200;
/** Each client's token requests before it rotates, between rotation and revocation, and after. */
const PHASE_MS = 1_500;
/** Pause between one client's token requests: each client asks about 10 times a second. */
const REQUEST_GAP_MS = 100;
/** The drill (not the cluster's start) must end within this. */
const DRILL_LIMIT_MS = 60_000;
const TOKEN_PATH = '/platform/v1/auth/token/client-credentials';

interface Tally {
  requests: number;
  /** Sent with a secret valid from before the request started until after it ended, and not answered 200. */
  validFailed: number;
  /** Sent after the secret's revocation had returned, and answered 200. */
  revokedAccepted: number;
  revokedRefused: number;
  /** Requests that overlapped a revocation: either answer is right. */
  overlapping: number;
  rotated: number;
  revoked: number;
  firstProblem?: string;
}

const started = Date.now();
const log = (text: string) =>
  process.stderr.write(`[${NAME} ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${text}\n`);

async function tokenRequest(baseUrl: string, clientId: string, secret: string): Promise<number> {
  const res = await fetch(`${baseUrl}${TOKEN_PATH}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  }).catch(() => undefined);
  if (!res) return 0;
  await res.arrayBuffer();
  return res.status;
}

/**
 * Runs at most `max` operations at once: the drill's own context has a small PostgreSQL pool (as the CLI's), and
 * 200 rotations at once would wait for a connection past the pool's timeout.
 */
function limitTo(max: number): <T>(operation: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (operation) => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await operation();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}
const admin = limitTo(8);

/**
 * One client's life, two loops side by side: the integration requests tokens without pause (alternating between
 * the secrets it holds), while the operator rotates, waits PHASE_MS, revokes the old secret, waits PHASE_MS. After
 * the revocation a forgotten copy of the old secret keeps being tried. A request with the old secret that was
 * under way while the revocation ran may get either answer; every other one is judged.
 */
async function drillOne(
  ctx: AppContext,
  baseUrl: string,
  companyId: string,
  drillClient: { clientId: string; secret: string },
  tally: Tally,
  deadline: number,
): Promise<void> {
  const { clientId: id, secret: oldSecret } = drillClient;
  let newSecret: string | undefined;
  let revocationStartedAt = Number.POSITIVE_INFINITY;
  let revokedAt = Number.POSITIVE_INFINITY;
  let done = false;
  const request = async (secret: string, isOld: boolean) => {
    const sentAt = Date.now();
    const status = await tokenRequest(baseUrl, id, secret);
    const endedAt = Date.now();
    tally.requests++;
    if (isOld && sentAt >= revokedAt) {
      if (status === 200) {
        tally.revokedAccepted++;
        tally.firstProblem ??= `${id}: a revoked secret got a token`;
      } else tally.revokedRefused++;
    } else if (isOld && endedAt >= revocationStartedAt) {
      tally.overlapping++;
    } else if (status !== 200) {
      tally.validFailed++;
      tally.firstProblem ??= `${id}: a valid secret got ${status}`;
    }
  };
  const integration = async () => {
    let flip = false;
    while (!done && Date.now() < deadline) {
      flip = !flip;
      await (flip || newSecret === undefined ? request(oldSecret, true) : request(newSecret, false));
      // Paced like an integration that asks often, not a flood: 200 clients back to back would only measure how
      // slowly an overloaded 2-core machine answers, and delay the rotations the drill is about.
      await sleep(REQUEST_GAP_MS);
    }
  };
  const operator = async () => {
    try {
      await sleep(PHASE_MS * Math.random());
      const rotated = await admin(() =>
        ctx.oauth.clients.rotateSecret({ companyId, clientId: id, actor: 'drill' }),
      );
      newSecret = rotated.client_secret;
      tally.rotated++;
      await sleep(PHASE_MS);
      await admin(async () => {
        const [old] = (await ctx.oauth.clients.listSecrets(companyId, id)).filter(
          (s) => s.id !== rotated.secret_id,
        );
        revocationStartedAt = Date.now();
        await ctx.oauth.clients.revokeSecret({ companyId, clientId: id, secretId: old!.id, actor: 'drill' });
        revokedAt = Date.now();
        tally.revoked++;
      });
      await sleep(PHASE_MS);
    } finally {
      done = true;
    }
  };
  await Promise.all([integration(), operator()]);
}

async function drill(
  cluster: FaultCluster,
  env: Record<string, string>,
): Promise<{ tally: Tally; ms: number }> {
  const ctx = await createContext(loadConfig(env), createLogger('warn', process.stderr));
  onCleanup('drill context', () => ctx.close());
  const tally: Tally = {
    requests: 0,
    validFailed: 0,
    revokedAccepted: 0,
    revokedRefused: 0,
    overlapping: 0,
    rotated: 0,
    revoked: 0,
  };
  const { companyId } = cluster.seeded;
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, () =>
      admin(async () => {
        const created = await ctx.oauth.clients.create({
          companyId,
          name: 'Drill client',
          scopes: ['connector:read'],
        });
        return { clientId: created.client.clientId, secret: created.secret };
      }),
    ),
  );
  log(`${CLIENTS} clients created; drilling`);
  const drillStarted = Date.now();
  const deadline = drillStarted + DRILL_LIMIT_MS;
  const progress = setInterval(
    () => log(`${tally.requests} requests, ${tally.rotated} rotated, ${tally.revoked} revoked`),
    5_000,
  );
  await Promise.all(
    clients.map((client) => drillOne(ctx, cluster.balancer.url, companyId, client, tally, deadline)),
  );
  clearInterval(progress);
  return { tally, ms: Date.now() - drillStarted };
}

installCleanupHandlers();
// Every request reaches the nodes from the balancer's address, and the drill sends on purpose with revoked
// secrets: the per-address failure budget (abuse control, docs/config.md "OAuth") would refuse the valid secrets
// sent from that one address too. Each client stays well within its default token quota.
const drillEnv = {
  PARLEY_AUTH_FAILURES_PER_MINUTE_PER_IP: '1000000',
  PARLEY_AUTH_FAILURES_PER_MINUTE: '1000000',
};
let exitCode = 1;
try {
  const cluster = await startCluster({ run: NAME, env: drillEnv });
  log(
    `cluster up: ${cluster.nodes.map((n) => `${n.name}:${n.port}`).join(' ')}, balancer ${cluster.balancer.url}`,
  );
  const { tally, ms: drillMs } = await drill(cluster, cluster.cliEnv);
  const alive = await nodesAlive(cluster);
  const problems = [
    ...(tally.validFailed > 0 ? [`${tally.validFailed} requests with a valid secret failed`] : []),
    ...(tally.revokedAccepted > 0
      ? [`${tally.revokedAccepted} requests with a revoked secret got a token`]
      : []),
    ...(tally.revokedRefused === 0
      ? ['no request with a revoked secret was made (the drill measured nothing)']
      : []),
    ...(drillMs >= DRILL_LIMIT_MS ? [`the drill took ${drillMs} ms (limit ${DRILL_LIMIT_MS})`] : []),
    ...nodeProblems(cluster, alive),
  ];
  if (tally.firstProblem) log(`first problem: ${tally.firstProblem}`);
  for (const problem of problems) log(`MISSED: ${problem}`);
  const line =
    `${NAME}: clients=${CLIENTS} requests=${tally.requests} valid_failed=${tally.validFailed} ` +
    `revoked_accepted=${tally.revokedAccepted} revoked_refused=${tally.revokedRefused} ` +
    `overlapping=${tally.overlapping} drill=${(drillMs / 1000).toFixed(1)}s ` +
    `nodes_alive=${alive.filter(Boolean).length}/${cluster.nodes.length}`;
  process.stdout.write(`${line} ${problems.length === 0 ? 'PASS' : 'FAIL'}\n`);
  exitCode = problems.length === 0 ? 0 : 1;
} catch (err) {
  process.stdout.write(`${NAME}: ERROR ${(err as Error).message.split('\n')[0]} FAIL\n`);
} finally {
  await cleanupAll();
}
process.exit(exitCode);
