import type { Metrics } from '../metrics/metrics.ts';
import type { Broadcaster } from './conversations/broadcaster.ts';
import type { ReplyObserver } from './conversations/conversation-engine.ts';

/** Reply timings into the webchat's histograms; error outcomes count as responder errors by code. */
export function replyObserver(metrics: Metrics): ReplyObserver {
  return {
    firstToken: (seconds) => metrics.replyFirstToken.observe(seconds),
    finished: (seconds, outcome) => {
      metrics.replyDuration.labels(outcome).observe(seconds);
      if (outcome !== 'completed') metrics.responderErrors.labels(outcome).inc();
    },
  };
}

/** Times every server-side publication through the broker (memory or Redis). */
export function timedBroadcaster(inner: Broadcaster, metrics: Metrics): Broadcaster {
  return {
    publish: (channel, envelope, options) =>
      metrics.timed(metrics.brokerPublishDuration, () => inner.publish(channel, envelope, options)),
  };
}
