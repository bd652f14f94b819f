import type { CentrifugeVisitor } from './centrifuge-visitor.ts';
/**
 * Milliseconds from `t0` until a probe sent at or after `t0` was answered completely (no error block) in
 * `visitor`'s view, or null when none was within `boundMs` of `t0` (or as soon as `hopeless()` says nothing can
 * answer any more, e.g. every node is dead).
 */
export declare function answersAgain(visitor: CentrifugeVisitor, t0: number, boundMs: number, hopeless?: () => boolean): Promise<number | null>;
