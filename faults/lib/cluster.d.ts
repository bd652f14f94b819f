import { TcpBalancer } from './load-balancer.ts';
import { ParleyNode } from './parley-node.ts';
import { PrivatePostgres } from './postgres-cluster.ts';
import { PrivateRedis } from './redis-server.ts';
import { type Seeded } from './seed.ts';
export declare const ARTIFACTS: string;
export interface FaultCluster {
    pg: PrivatePostgres;
    redis: PrivateRedis;
    nodes: ParleyNode[];
    balancer: TcpBalancer;
    seeded: Seeded;
    /** Where the node, Redis and report files of this run are. */
    artifacts: string;
}
export interface ClusterOptions {
    /** Names the artifact files, e.g. the scenario's name. */
    run: string;
    nodes?: number;
    /** Soak: nodes report their figures to files in the artifacts folder every `intervalMs`. */
    report?: {
        intervalMs: number;
    };
    /** The Redis URL node `index` gets (default the private Redis's), e.g. a proxy the scenario can cut. */
    nodeRedisUrl?: (index: number, redis: PrivateRedis) => Promise<string>;
}
export declare function startCluster(options: ClusterOptions): Promise<FaultCluster>;
