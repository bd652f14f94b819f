import type { RealtimeEngine } from '@parley/realtime';
import type { SystemNodeView, SystemSnapshot } from '@parley/wire-types';
import { sql } from 'kysely';
import type { Store } from '../storage/database.ts';
import type { WebhooksService } from '../webhooks/webhooks.service.ts';
import type { RecentErrors } from './recent-errors.ts';

export interface SystemViewDeps {
  realtime: RealtimeEngine;
  store: Store;
  webhooks: WebhooksService;
  recentErrors: RecentErrors;
}

/**
 * The portal's system view: the cluster's nodes as their heartbeats announce them (docs/protocol.md "Cluster"),
 * connection and subscription totals, the company's replies in flight and webhook backlog, and the company's
 * recent errors on this node.
 */
export class SystemView {
  constructor(private readonly deps: SystemViewDeps) {}

  async snapshot(companyId: string): Promise<SystemSnapshot> {
    const { realtime, recentErrors } = this.deps;
    const nodes = realtime
      .info()
      .nodes.map(
        (n): SystemNodeView => ({
          id: n.uid,
          name: n.name,
          version: n.version,
          clients: n.num_clients,
          users: n.num_users,
          subscriptions: n.num_subs,
          channels: n.num_channels,
          uptime_seconds: n.uptime,
          this_node: n.uid === realtime.nodeId,
        }),
      )
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    return {
      generated_at: new Date().toISOString(),
      nodes,
      totals: {
        nodes: nodes.length,
        clients: sum(nodes, 'clients'),
        subscriptions: sum(nodes, 'subscriptions'),
        // A channel with subscribers on several nodes counts on each: the engine's own figure, as Centrifugo's.
        channels: sum(nodes, 'channels'),
      },
      replies: await this.replyLine(companyId),
      webhooks: await this.deps.webhooks.backlog(companyId),
      recent_errors: recentErrors.list(companyId),
    };
  }

  private async replyLine(companyId: string): Promise<SystemSnapshot['replies']> {
    const rows = await this.deps.store.db
      .selectFrom('reply_jobs')
      .innerJoin('conversations', 'conversations.id', 'reply_jobs.conversation_id')
      .where('conversations.company_id', '=', companyId)
      .select(['reply_jobs.state as state', sql<number>`count(*)`.as('count')])
      .groupBy('reply_jobs.state')
      .execute();
    const count = (state: string) => Number(rows.find((r) => r.state === state)?.count ?? 0);
    return { queued: count('queued'), streaming: count('running') };
  }
}

const sum = (nodes: SystemNodeView[], key: 'clients' | 'subscriptions' | 'channels') =>
  nodes.reduce((total, n) => total + n[key], 0);
