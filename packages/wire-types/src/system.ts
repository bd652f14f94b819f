/** One node of the cluster as Settings → System shows it. */
export interface SystemNodeView {
  id: string;
  name: string;
  version: string;
  clients: number;
  users: number;
  subscriptions: number;
  channels: number;
  uptime_seconds: number;
  /** The node that answered this request. */
  this_node: boolean;
}

/** One warning or error a node logged, reduced to fields that name no tenant data and no secret. */
export interface RecentErrorView {
  at: string;
  level: 'warn' | 'error' | 'fatal';
  /** The log line's fixed message: a string in the code, never user input. */
  message: string;
  module: string | null;
  /** The error's stable code or class name, when the line carried an error. */
  code: string | null;
  request_id: string | null;
}

/** The company's event webhook deliveries not yet made, and its endpoints in trouble. */
export interface WebhookBacklogView {
  pending: number;
  oldest_pending_at: string | null;
  failing_endpoints: number;
  disabled_endpoints: number;
}

/** `GET /portal/api/system`: what the cluster is doing now. */
export interface SystemSnapshot {
  generated_at: string;
  nodes: SystemNodeView[];
  totals: { nodes: number; clients: number; subscriptions: number; channels: number };
  /** The company's reply line: user messages waiting for their reply, and replies streaming now. */
  replies: { queued: number; streaming: number };
  webhooks: WebhookBacklogView;
  /** The company's warnings and errors on the node that answered (each node keeps its own). */
  recent_errors: RecentErrorView[];
}
