// The system under test of one fault run: a private PostgreSQL cluster, a private Redis, two (or more) Parley
// nodes sharing them, and the balancer in front. Everything is registered for cleanup as it is created.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@parley/testing/process';
import { onCleanup } from './cleanup.ts';
import { childEnv } from './environment.ts';
import { TcpBalancer } from './load-balancer.ts';
import { ParleyNode, repoRoot } from './parley-node.ts';
import { PrivatePostgres } from './postgres-cluster.ts';
import { PrivateRedis } from './redis-server.ts';
import { type Seeded, seed } from './seed.ts';

export const ARTIFACTS = join(repoRoot, 'test-artifacts', 'faults');

export interface FaultCluster {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  nodes: ParleyNode[];
  balancer: TcpBalancer;
  seeded: Seeded;
  /** The environment the seeding CLI ran with: what an operator's `npx parley …` against this cluster gets. */
  cliEnv: Record<string, string>;
  /** Where the node, Redis and report files of this run are. */
  artifacts: string;
}

export interface ClusterOptions {
  /** Names the artifact files, e.g. the scenario's name. */
  run: string;
  nodes?: number;
  /** Soak: nodes report their figures to files in the artifacts folder every `intervalMs`. */
  report?: { intervalMs: number };
  /** The Redis URL node `index` gets (default the private Redis's), e.g. a proxy the scenario can cut. */
  nodeRedisUrl?: (index: number, redis: PrivateRedis) => Promise<string>;
  /** More environment for every node (and the seeding CLI), e.g. a limit a drill must not run into. */
  env?: Record<string, string>;
}

/** A temporary folder (a node's data dir) removed at cleanup. */
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  onCleanup(`temporary folder ${dir}`, async () => remove(), remove);
  return dir;
}

export async function startCluster(options: ClusterOptions): Promise<FaultCluster> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const artifacts = join(ARTIFACTS, `${options.run}-${stamp}`);
  mkdirSync(artifacts, { recursive: true });
  const pg = await PrivatePostgres.create();
  const redis = await PrivateRedis.create(join(artifacts, 'redis.log'));
  const ports = await Promise.all(Array.from({ length: options.nodes ?? 2 }, () => freePort()));
  const balancer = new TcpBalancer(ports);
  await balancer.listen();
  const secrets = {
    PARLEY_REALTIME_TOKEN_SECRET: randomBytes(32).toString('hex'),
    PARLEY_MASTER_KEYS: `1:${randomBytes(32).toString('base64')}`,
  };
  const env = (dataDir: string, redisUrl = redis.url) =>
    childEnv({
      HOST: '127.0.0.1',
      DATABASE_URL: pg.url,
      REDIS_URL: redisUrl,
      PARLEY_PUBLIC_URL: balancer.url,
      PARLEY_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...secrets,
      // Every visitor reaches the nodes from the balancer's address: per-IP limits would count them as one
      // client. The per-session limits stay as configured by default.
      PARLEY_WEBCHAT_MESSAGES_PER_MINUTE_PER_IP: '1000000',
      PARLEY_WEBCHAT_CONVERSATIONS_PER_MINUTE_PER_IP: '1000000',
      PARLEY_MAX_CONNECTIONS_PER_ADDRESS: '1000000',
      ...options.env,
    });
  const cliEnv = env(tempDir('parley-fault-cli-'));
  const seeded = await seed(cliEnv);
  const redisUrls = await Promise.all(
    ports.map((_, i) => options.nodeRedisUrl?.(i, redis) ?? Promise.resolve(redis.url)),
  );
  const nodes = ports.map((port, i) => {
    const name = `node-${String.fromCharCode(97 + i)}`;
    return new ParleyNode({
      name,
      port,
      env: env(tempDir('parley-fault-node-'), redisUrls[i]),
      logFile: join(artifacts, `${name}.log`),
      report: options.report && {
        file: join(artifacts, `${name}.samples.jsonl`),
        intervalMs: options.report.intervalMs,
      },
    });
  });
  await Promise.all(nodes.map((node) => node.start()));
  return { pg, redis, nodes, balancer, seeded, cliEnv, artifacts };
}
