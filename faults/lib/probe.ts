// "Answers again": from a moment T0 (a fault's end, or a kill), how long until a message newly sent in an affected
// conversation gets a complete digital-employee reply. The seeded digital employee answers "probe tagNN" with
// exactly "ack tagNN" (seed.ts), so a reply is matched to the probe that asked for it even among other traffic.
import type { CentrifugeVisitor } from './centrifuge-visitor.ts';
import { PROBE_TAGS, probeAnswer } from './seed.ts';

/** Probes sent by one visitor so far: tags cycle, and a reply only counts for a tag sent after T0. */
const probeCounters = new WeakMap<CentrifugeVisitor, number>();

/** A new probe is sent this often while none has been answered (each one retried by the visitor as usual). */
const PROBE_EVERY_MS = 4_000;

/**
 * Milliseconds from `t0` until a probe sent at or after `t0` was answered completely (no error block) in
 * `visitor`'s view, or null when none was within `boundMs` of `t0` (or as soon as `hopeless()` says nothing can
 * answer any more, e.g. every node is dead).
 */
export async function answersAgain(
  visitor: CentrifugeVisitor,
  t0: number,
  boundMs: number,
  hopeless: () => boolean = () => false,
): Promise<number | null> {
  const deadline = t0 + boundMs;
  const known = new Set(visitor.view.messages.keys());
  const waitingFor = new Set<string>();
  const answered = () => {
    for (const message of visitor.view.messages.values()) {
      if (known.has(message.id) || message.role !== 'digital_employee' || message.status !== 'complete')
        continue;
      if (message.errorCodes.length === 0 && waitingFor.has(message.text)) return true;
    }
    return false;
  };
  while (Date.now() < deadline && !hopeless()) {
    const count = (probeCounters.get(visitor) ?? 0) + 1;
    probeCounters.set(visitor, count);
    const tag = PROBE_TAGS[count % PROBE_TAGS.length]!;
    waitingFor.add(probeAnswer(tag));
    void visitor.send(`probe ${tag}`);
    const wait = Math.min(PROBE_EVERY_MS, deadline - Date.now());
    if (await visitor.view.holdsWithin(answered, wait)) return Date.now() - t0;
  }
  return null;
}
