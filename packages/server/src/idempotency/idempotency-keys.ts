import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Store } from '../storage/database.ts';
import { clockMs } from '../storage/db-clock.ts';

/** How long a key is remembered with its first answer (docs/design.md "Idempotency keys"). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long a request may run under a key before another request with the same key may take it over: the first one's
 * node died before it recorded an answer. Far longer than a message post takes, and than `finish` keeps retrying.
 */
const CLAIM_LEASE_MS = 5 * 60_000;

/** Delays between attempts of a write the store could not take at once (about two minutes in all). */
const RETRY_DELAYS_MS = [250, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 60_000];

/** How long a duplicate waits for the first request's answer before it is told the key is in use. */
const WAIT_FOR_ANSWER_MS = 10_000;
const POLL_MS = 50;

/** Expired keys are deleted at most this often per node, by whichever request comes next. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** A recorded answer: what the first request was answered. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** What a request with a key may do. */
export type Claim =
  /** Run, then `finish` (or `release` when no answer should be kept). */
  | { kind: 'claimed' }
  /** Answer this, the first request's answer, and do nothing. */
  | { kind: 'replay'; answer: StoredAnswer }
  /** The key was first used for another request (another body, conversation or route). */
  | { kind: 'reused' }
  /** The first request is still running after the wait. */
  | { kind: 'in_use' };

export interface KeyRef {
  companyId: string;
  key: string;
}

/**
 * Idempotency keys of one store (docs/design.md "Idempotency keys"). The row's primary key (company, key) is the claim:
 * of concurrent requests with the same key exactly one inserts it and runs; the others wait for its answer and replay
 * it. Rows older than 24 h count as absent and are pruned.
 */
export class IdempotencyKeys {
  private lastPruneMs = 0;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  async claim(ref: KeyRef, fingerprint: string): Promise<Claim> {
    this.pruneNowAndThen();
    const deadline = Date.now() + WAIT_FOR_ANSWER_MS;
    for (let attempt = 0; Date.now() < deadline || attempt === 0; attempt++) {
      if (await this.insert(ref, fingerprint)) return { kind: 'claimed' };
      const row = await this.read(ref);
      // Deleted meanwhile (expired and pruned, or released by a request that failed): try again at once.
      if (!row) continue;
      if (row.expired) {
        await this.deleteExpired(ref);
        continue;
      }
      if (row.fingerprint !== fingerprint) return { kind: 'reused' };
      if (row.answer) return { kind: 'replay', answer: row.answer };
      if (row.leaseLapsed && (await this.takeOver(ref, row.claimedMs))) return { kind: 'claimed' };
      await sleep(POLL_MS);
    }
    return { kind: 'in_use' };
  }

  /**
   * Records the answer of the request that claimed the key. What it answers is done and must not be done again, so
   * an answer the store cannot take now is retried in the background (a duplicate meanwhile waits, then hears
   * `idempotency_key_in_use`); resolves after the first attempt either way.
   */
  finish(ref: KeyRef, answer: StoredAnswer): Promise<void> {
    return this.persist('recording an idempotent answer', () => this.record(ref, answer));
  }

  /**
   * Gives the key up without an answer (the request failed on our side, the store away perhaps): a retry runs anew.
   * Retried in the background like `finish`, so a store that was away does not leave the key claimed.
   */
  release(ref: KeyRef): Promise<void> {
    return this.persist('releasing an idempotency key', async () => {
      await this.store.db
        .deleteFrom('idempotency_keys')
        .where('company_id', '=', ref.companyId)
        .where('idempotency_key', '=', ref.key)
        .where('status_code', 'is', null)
        .execute();
    });
  }

  /** Runs `write` once and, if the store cannot take it now, again in the background for about two minutes. */
  private async persist(what: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
      return;
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, `${what} failed; retrying`);
    }
    void (async () => {
      for (const delay of RETRY_DELAYS_MS) {
        await sleep(delay, undefined, { ref: false });
        try {
          await write();
          return;
        } catch {
          // next attempt
        }
      }
      this.logger.warn(`gave up ${what}; a retry after the claim's lease runs again`);
    })();
  }

  private async record(ref: KeyRef, answer: StoredAnswer): Promise<void> {
    await this.store.db
      .updateTable('idempotency_keys')
      .set({ status_code: answer.status, content_type: answer.contentType, response_body: answer.body })
      .where('company_id', '=', ref.companyId)
      .where('idempotency_key', '=', ref.key)
      .execute();
  }

  /** Deletes the keys older than 24 h; answers how many. */
  async prune(): Promise<number> {
    const result = await this.store.db
      .deleteFrom('idempotency_keys')
      .where('created_ms', '<', clockMs(this.store.dialect, -IDEMPOTENCY_KEY_TTL_MS))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private async insert(ref: KeyRef, fingerprint: string): Promise<boolean> {
    const now = clockMs(this.store.dialect);
    const result = await this.store.db
      .insertInto('idempotency_keys')
      .values({
        company_id: ref.companyId,
        idempotency_key: ref.key,
        fingerprint,
        created_ms: now,
        claimed_ms: now,
        status_code: null,
        content_type: null,
        response_body: null,
      })
      .onConflict((oc) => oc.columns(['company_id', 'idempotency_key']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  private async read(ref: KeyRef) {
    const dialect = this.store.dialect;
    const row = await this.store.db
      .selectFrom('idempotency_keys')
      .select([
        'fingerprint',
        'claimed_ms',
        'status_code',
        'content_type',
        'response_body',
        (eb) => eb('created_ms', '<', clockMs(dialect, -IDEMPOTENCY_KEY_TTL_MS)).as('expired'),
        (eb) => eb('claimed_ms', '<', clockMs(dialect, -CLAIM_LEASE_MS)).as('lease_lapsed'),
      ])
      .where('company_id', '=', ref.companyId)
      .where('idempotency_key', '=', ref.key)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      fingerprint: row.fingerprint,
      claimedMs: Number(row.claimed_ms),
      expired: Boolean(row.expired),
      leaseLapsed: Boolean(row.lease_lapsed),
      answer:
        row.status_code === null
          ? undefined
          : { status: row.status_code, contentType: row.content_type ?? '', body: row.response_body ?? '' },
    };
  }

  private async deleteExpired(ref: KeyRef): Promise<void> {
    await this.store.db
      .deleteFrom('idempotency_keys')
      .where('company_id', '=', ref.companyId)
      .where('idempotency_key', '=', ref.key)
      .where('created_ms', '<', clockMs(this.store.dialect, -IDEMPOTENCY_KEY_TTL_MS))
      .execute();
  }

  /** Takes over a claim whose lease lapsed; only one of several requests doing so at once succeeds. */
  private async takeOver(ref: KeyRef, claimedMs: number): Promise<boolean> {
    const result = await this.store.db
      .updateTable('idempotency_keys')
      .set({ claimed_ms: clockMs(this.store.dialect) })
      .where('company_id', '=', ref.companyId)
      .where('idempotency_key', '=', ref.key)
      .where('claimed_ms', '=', claimedMs)
      .where('status_code', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  private pruneNowAndThen(): void {
    const now = Date.now();
    if (now - this.lastPruneMs < PRUNE_EVERY_MS) return;
    this.lastPruneMs = now;
    this.prune().catch((err: unknown) =>
      this.logger.warn({ err: { message: (err as Error).message } }, 'could not prune idempotency keys'),
    );
  }
}
