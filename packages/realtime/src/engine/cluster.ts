import { randomUUID } from 'node:crypto';
import { DisconnectCode, disconnectReason, UnsubscribeCode, unsubscribeReason } from '../protocol/codes.ts';
import {
  type ConnectionFilter,
  type ControlMessage,
  compileChannelPattern,
  decodeControl,
  encodeControl,
  type NodeInfo,
} from './control.ts';
import type { EngineCore } from './core.ts';
import type { RemoteDelivery, RemoteEmulation } from './emulation.ts';
import {
  refreshServerSide,
  type ServerRefreshRequest,
  type ServerSubscribeRequest,
  subscribeServerSide,
} from './server-side.ts';
import type { ClientSession } from './session.ts';

type Survey = Extract<ControlMessage, { t: 'survey' }>;

export interface DisconnectOptions {
  /**
   * Close code, default 3503 "force disconnect" (terminal); use 3000–3499/4000–4499 to let clients reconnect.
   */
  code?: number;
  reason?: string;
  /** Only this connection of the user. */
  clientId?: string;
  /** Only the emulation connection with this session id. */
  sessionId?: string;
  /** Connections of the user to keep. */
  whitelist?: string[];
}

/** Narrows a per-user server operation to one connection or one emulation session. */
export interface TargetOptions {
  clientId?: string;
  sessionId?: string;
}

export interface UnsubscribeOptions {
  clientId?: string;
  sessionId?: string;
  /** Unsubscribe code, default 2000 "server unsubscribe". */
  code?: number;
  reason?: string;
}

interface PendingSurvey {
  expected: Set<string>;
  results: unknown[];
  done: () => void;
}

/** Hands `/emulation` data to a session of this node; false when it has no such session. */
export type LocalEmulation = (session: string, data: Buffer) => boolean;

/**
 * What makes the server API and emulation work across nodes: every node announces itself on the broker's control
 * channel (heartbeats → `/api/info`), applies disconnect/unsubscribe requests to its own connections, answers
 * surveys (`/api/channels`) and receives `/emulation` commands for its sessions that reached another node. Every
 * node, including the sender, receives each control message.
 */
export class Cluster implements RemoteEmulation {
  private readonly nodes = new Map<string, { info: NodeInfo; seenAt: number }>();
  private readonly surveys = new Map<string, PendingSurvey>();
  private readonly emulations = new Map<string, (outcome: RemoteDelivery) => void>();
  private readonly startedAt = Date.now();

  constructor(
    private readonly core: EngineCore,
    private readonly deliverLocal: LocalEmulation,
  ) {}

  /**
   * Sends `/emulation` commands to the node holding the session and waits for it to take them (at most
   * `surveyTimeoutMs`), as Centrifugo does through its survey to the session's node.
   */
  async deliver(node: string, session: string, data: Buffer): Promise<RemoteDelivery> {
    this.pruneNodes(Date.now());
    if (!this.nodes.has(node)) return 'unknown_node';
    const id = randomUUID();
    return new Promise<RemoteDelivery>((resolve) => {
      const timer = setTimeout(() => finish('failed'), this.core.options.surveyTimeoutMs);
      const finish = (outcome: RemoteDelivery): void => {
        clearTimeout(timer);
        this.emulations.delete(id);
        resolve(outcome);
      };
      this.emulations.set(id, finish);
      this.publish({
        t: 'emulation',
        from: this.core.nodeId,
        to: node,
        id,
        session,
        data: data.toString('base64'),
      }).catch((error: unknown) => {
        this.core.logger.warn({ error: String(error) }, 'emulation forward failed');
        finish('failed');
      });
    });
  }

  publish(message: ControlMessage): Promise<void> {
    return this.core.broker.publishControl(encodeControl(message));
  }

  /** Disconnects a user's connections on every node (default 3503, terminal). */
  async disconnectUser(user: string, options: DisconnectOptions = {}): Promise<void> {
    const code = options.code ?? DisconnectCode.forceNoReconnect;
    await this.publish({
      t: 'disconnect',
      from: this.core.nodeId,
      user,
      code,
      reason: options.reason ?? disconnectReason(code),
      ...filterOf(options),
      ...(options.whitelist?.length ? { whitelist: options.whitelist } : {}),
    });
  }

  /** Subscribes a user's connections on every node server-side (they get a `subscribe` push). */
  async subscribeUser(
    user: string,
    request: ServerSubscribeRequest,
    options: TargetOptions = {},
  ): Promise<void> {
    await this.publish({ t: 'subscribe', from: this.core.nodeId, user, request, ...filterOf(options) });
  }

  /** Renews or ends a user's connections on every node (server-side refresh). */
  async refreshUser(user: string, request: ServerRefreshRequest, options: TargetOptions = {}): Promise<void> {
    await this.publish({ t: 'refresh', from: this.core.nodeId, user, request, ...filterOf(options) });
  }

  /** Unsubscribes a user from a channel on every node (unsubscribe push 2000 by default). */
  async unsubscribe(user: string, channel: string, options: UnsubscribeOptions = {}): Promise<void> {
    const code = options.code ?? UnsubscribeCode.server;
    await this.publish({
      t: 'unsubscribe',
      from: this.core.nodeId,
      user,
      channel,
      code,
      reason: options.reason ?? unsubscribeReason(code),
      ...filterOf(options),
    });
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
      case 'subscribe':
        for (const session of this.targets(message.user, message)) {
          void subscribeServerSide(session, message.request);
        }
        return;
      case 'refresh':
        for (const session of this.targets(message.user, message))
          refreshServerSide(session, message.request);
        return;
      case 'survey':
        void this.answerSurvey(message);
        return;
      case 'emulation':
        if (message.to === this.core.nodeId) this.receiveEmulation(message);
        return;
      case 'emulation_reply':
        if (message.to === this.core.nodeId) this.emulations.get(message.id)?.('delivered');
        return;
      case 'survey_reply': {
        if (message.to !== this.core.nodeId) return;
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
    this.nodes.set(this.core.nodeId, { info: this.localNodeInfo(now), seenAt: now });
    this.pruneNodes(now);
    return [...this.nodes.values()].map((n) => n.info);
  }

  /** Active channels of every node, merged: channel → number of subscribed connections. */
  async channels(pattern: string | undefined): Promise<Record<string, { num_clients: number }>> {
    const replies = await this.survey({
      t: 'survey',
      from: this.core.nodeId,
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
    await this.publish({ t: 'node', from: this.core.nodeId, node: this.localNodeInfo(now) }).catch(
      (error: unknown) => {
        this.core.logger.warn({ error: String(error) }, 'node heartbeat failed');
      },
    );
    this.pruneNodes(now);
  }

  /** Tells the other nodes this one is gone and releases pending surveys. */
  async leave(): Promise<void> {
    for (const survey of this.surveys.values()) survey.done();
    for (const done of this.emulations.values()) done('failed');
    await this.publish({ t: 'node_leave', from: this.core.nodeId }).catch(() => undefined);
  }

  /** Commands for one of this node's sessions, posted to another node; the sender is told they were taken. */
  private receiveEmulation(message: Extract<ControlMessage, { t: 'emulation' }>): void {
    // A session that ended meanwhile is not an error (its stream ended too): the sender answers 204 either way.
    this.deliverLocal(message.session, Buffer.from(message.data, 'base64'));
    this.publish({ t: 'emulation_reply', from: this.core.nodeId, to: message.from, id: message.id }).catch(
      (error: unknown) => this.core.logger.warn({ error: String(error) }, 'emulation reply failed'),
    );
  }

  /**
   * This node's connections of `user`, narrowed to one client id or emulation session when the message names one.
   * Every connection the hub holds is a `ClientSession`; the hub itself only needs the `ClientHandle` view.
   */
  private targets(user: string, filter: ConnectionFilter): ClientSession[] {
    const sessions = this.core.hub.userSessions(user);
    if (sessions === undefined) return [];
    return ([...sessions] as ClientSession[]).filter(
      (s) =>
        (filter.client === undefined || s.id === filter.client) &&
        (filter.session === undefined || s.sessionId === filter.session),
    );
  }

  private applyDisconnect(message: Extract<ControlMessage, { t: 'disconnect' }>): void {
    for (const session of this.targets(message.user, message)) {
      if (message.whitelist?.includes(session.id)) continue;
      session.disconnect(message.code, message.reason);
    }
  }

  private applyUnsubscribe(message: Extract<ControlMessage, { t: 'unsubscribe' }>): void {
    // Server-side subscriptions get the same push; the SDK emits `unsubscribed` on the client for them.
    for (const session of this.targets(message.user, message)) {
      session.unsubscribe(message.channel, message.code, message.reason);
    }
  }

  private async answerSurvey(message: Survey): Promise<void> {
    const matches = compileChannelPattern(message.pattern);
    const channels: Record<string, number> = {};
    for (const [channel, count] of this.core.hub.channelCounts()) {
      if (matches === undefined || matches(channel)) channels[channel] = count;
    }
    const reply: ControlMessage = {
      t: 'survey_reply',
      from: this.core.nodeId,
      to: message.from,
      id: message.id,
      result: { channels },
    };
    await this.publish(reply).catch((error: unknown) => {
      this.core.logger.warn({ error: String(error) }, 'survey reply failed');
    });
  }

  /** Asks every known node and waits for all answers or `surveyTimeoutMs`, whichever comes first. */
  private survey(message: Survey): Promise<unknown[]> {
    this.pruneNodes(Date.now());
    const expected = new Set(this.nodes.keys());
    expected.add(this.core.nodeId);
    return new Promise((resolve) => {
      const results: unknown[] = [];
      const timer = setTimeout(() => done(), this.core.options.surveyTimeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.surveys.delete(message.id);
        resolve(results);
      };
      this.surveys.set(message.id, { expected, results, done });
      this.publish(message).catch((error: unknown) => {
        this.core.logger.warn({ error: String(error) }, 'survey publish failed');
        done();
      });
    });
  }

  private localNodeInfo(now: number): NodeInfo {
    const { hub } = this.core;
    return {
      uid: this.core.nodeId,
      name: this.core.nodeName,
      version: this.core.options.serverVersion,
      num_clients: hub.numClients,
      num_users: hub.numUsers,
      num_subs: hub.numSubscriptions,
      num_channels: hub.numChannels,
      uptime: Math.floor((now - this.startedAt) / 1000),
    };
  }

  /** Nodes silent for three heartbeats (plus a second) are considered gone. */
  private pruneNodes(now: number): void {
    const maxAge = this.core.options.nodeHeartbeatIntervalMs * 3 + 1_000;
    for (const [uid, node] of this.nodes) {
      if (uid !== this.core.nodeId && now - node.seenAt > maxAge) this.nodes.delete(uid);
    }
  }
}

function filterOf(options: TargetOptions): ConnectionFilter {
  return {
    ...(options.clientId ? { client: options.clientId } : {}),
    ...(options.sessionId ? { session: options.sessionId } : {}),
  };
}
