import { randomUUID } from 'node:crypto';
import {
  type ControlMessage,
  compileChannelPattern,
  decodeControl,
  encodeControl,
  type NodeInfo,
} from './control.ts';
import type { RealtimeEngine } from './engine.ts';

type Survey = Extract<ControlMessage, { t: 'survey' }>;

interface PendingSurvey {
  expected: Set<string>;
  results: unknown[];
  done: () => void;
}

/**
 * What makes the server API work across nodes: every node announces itself on the broker's control channel
 * (heartbeats → `/api/info`), applies disconnect/unsubscribe requests to its own connections, and answers
 * surveys (`/api/channels`). Every node, including the sender, receives each control message.
 */
export class Cluster {
  private readonly nodes = new Map<string, { info: NodeInfo; seenAt: number }>();
  private readonly surveys = new Map<string, PendingSurvey>();
  private readonly startedAt = Date.now();

  constructor(private readonly engine: RealtimeEngine) {}

  publish(message: ControlMessage): Promise<void> {
    return this.engine.broker.publishControl(encodeControl(message));
  }

  onControl(text: string): void {
    const message = decodeControl(text);
    if (message === undefined) return;
    switch (message.t) {
      case 'node':
        this.nodes.set(message.from, { info: message.node, seenAt: Date.now() });
        return;
      case 'node_leave':
        this.nodes.delete(message.from);
        return;
      case 'disconnect':
        this.applyDisconnect(message);
        return;
      case 'unsubscribe':
        this.applyUnsubscribe(message);
        return;
      case 'survey':
        void this.answerSurvey(message);
        return;
      case 'survey_reply': {
        if (message.to !== this.engine.nodeId) return;
        const survey = this.surveys.get(message.id);
        if (survey === undefined) return;
        survey.results.push(message.result);
        survey.expected.delete(message.from);
        if (survey.expected.size === 0) survey.done();
        return;
      }
    }
  }

  /** Nodes as last announced, with this node's figures fresh. */
  info(): NodeInfo[] {
    const now = Date.now();
    this.nodes.set(this.engine.nodeId, { info: this.localNodeInfo(now), seenAt: now });
    this.pruneNodes(now);
    return [...this.nodes.values()].map((n) => n.info);
  }

  /** Active channels of every node, merged: channel → number of subscribed connections. */
  async channels(pattern: string | undefined): Promise<Record<string, { num_clients: number }>> {
    const replies = await this.survey({
      t: 'survey',
      from: this.engine.nodeId,
      id: randomUUID(),
      op: 'channels',
      ...(pattern ? { pattern } : {}),
    });
    const merged: Record<string, { num_clients: number }> = {};
    for (const reply of replies) {
      const counts = (reply as { channels?: Record<string, number> }).channels ?? {};
      for (const [channel, count] of Object.entries(counts)) {
        merged[channel] = { num_clients: (merged[channel]?.num_clients ?? 0) + count };
      }
    }
    return merged;
  }

  async heartbeat(): Promise<void> {
    const now = Date.now();
    await this.publish({ t: 'node', from: this.engine.nodeId, node: this.localNodeInfo(now) }).catch(
      (error: unknown) => {
        this.engine.logger.warn({ error: String(error) }, 'node heartbeat failed');
      },
    );
    this.pruneNodes(now);
  }

  /** Tells the other nodes this one is gone and releases pending surveys. */
  async leave(): Promise<void> {
    for (const survey of this.surveys.values()) survey.done();
    await this.publish({ t: 'node_leave', from: this.engine.nodeId }).catch(() => undefined);
  }

  private applyDisconnect(message: Extract<ControlMessage, { t: 'disconnect' }>): void {
    const sessions = this.engine.hub.userSessions(message.user);
    if (sessions === undefined) return;
    for (const session of [...sessions]) {
      if (message.client !== undefined && session.id !== message.client) continue;
      if (message.whitelist?.includes(session.id)) continue;
      session.disconnect(message.code, message.reason);
    }
  }

  private applyUnsubscribe(message: Extract<ControlMessage, { t: 'unsubscribe' }>): void {
    const sessions = this.engine.hub.userSessions(message.user);
    if (sessions === undefined) return;
    for (const session of [...sessions]) {
      if (message.client !== undefined && session.id !== message.client) continue;
      // Server-side subscriptions get the same push; the SDK emits `unsubscribed` on the client for them.
      session.unsubscribe(message.channel, message.code, message.reason);
    }
  }

  private async answerSurvey(message: Survey): Promise<void> {
    const matches = compileChannelPattern(message.pattern);
    const channels: Record<string, number> = {};
    for (const [channel, count] of this.engine.hub.channelCounts()) {
      if (matches === undefined || matches(channel)) channels[channel] = count;
    }
    const reply: ControlMessage = {
      t: 'survey_reply',
      from: this.engine.nodeId,
      to: message.from,
      id: message.id,
      result: { channels },
    };
    await this.publish(reply).catch((error: unknown) => {
      this.engine.logger.warn({ error: String(error) }, 'survey reply failed');
    });
  }

  /** Asks every known node and waits for all answers or `surveyTimeoutMs`, whichever comes first. */
  private survey(message: Survey): Promise<unknown[]> {
    this.pruneNodes(Date.now());
    const expected = new Set(this.nodes.keys());
    expected.add(this.engine.nodeId);
    return new Promise((resolve) => {
      const results: unknown[] = [];
      const timer = setTimeout(() => done(), this.engine.options.surveyTimeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.surveys.delete(message.id);
        resolve(results);
      };
      this.surveys.set(message.id, { expected, results, done });
      this.publish(message).catch((error: unknown) => {
        this.engine.logger.warn({ error: String(error) }, 'survey publish failed');
        done();
      });
    });
  }

  private localNodeInfo(now: number): NodeInfo {
    const { hub } = this.engine;
    return {
      uid: this.engine.nodeId,
      name: this.engine.nodeName,
      version: this.engine.options.serverVersion,
      num_clients: hub.numClients,
      num_users: hub.numUsers,
      num_subs: hub.numSubscriptions,
      num_channels: hub.numChannels,
      uptime: Math.floor((now - this.startedAt) / 1000),
    };
  }

  /** Nodes silent for three heartbeats (plus a second) are considered gone. */
  private pruneNodes(now: number): void {
    const maxAge = this.engine.options.nodeHeartbeatIntervalMs * 3 + 1_000;
    for (const [uid, node] of this.nodes) {
      if (uid !== this.engine.nodeId && now - node.seenAt > maxAge) this.nodes.delete(uid);
    }
  }
}
