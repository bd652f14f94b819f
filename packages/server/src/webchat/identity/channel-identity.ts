import type { ChannelIdentityView } from '@parley/wire-types';
import type { Kysely } from 'kysely';
import type { AuditLog } from '../../audit/audit.service.ts';
import type { Sealer } from '../../crypto/sealing.ts';
import { ConflictError } from '../../errors/app-error.ts';
import { LruCache } from '../../oauth/lru-cache.ts';
import type { Database } from '../../storage/schema.ts';
import type { Channel, ChannelsService, IdentityMode } from '../channels/channels.service.ts';
import { type Visitor, visitorKeyOf } from '../visitor.ts';
import { channelNotFound, visitorTokenInvalid, visitorTokenRequired } from '../webchat.errors.ts';
import { generateIdentitySecret, identitySecretAad, type SecretSlot } from './identity-secret.ts';
import { VisitorTokenRefusal, verifyVisitorToken } from './visitor-token.ts';

/** After a rotation the previous secret keeps verifying tokens this long, so integrators can roll over. */
const PREVIOUS_SECRET_GRACE_MS = 24 * 3600 * 1000;

/** What `parley channels identity` and the portal answer (docs/design.md "Visitor identity"). */
/** A channel's identity mode after a change, with a new secret only the one time it is made (the portal's shape). */
export type IdentitySettings = ChannelIdentityView;

export interface IdentityChange {
  mode: IdentityMode;
  rotateSecret?: boolean;
}

export interface ChannelIdentityDeps {
  db: Kysely<Database>;
  sealer: Sealer;
  audit: AuditLog;
  channels: ChannelsService;
  /** Leeway for the clocks of the integrator's backend and ours (PARLEY_CLOCK_TOLERANCE_SECONDS). */
  toleranceSeconds: number;
}

/**
 * Verified visitor identity per channel: its mode (`off`, `optional`, `required`) and its identity secret — created
 * when the channel first needs one, rotatable, sealed at rest like connector keys (slot-bound associated data), the
 * previous one verifying tokens for 24 h after a rotation — and the one place that turns a request's
 * `X-Visitor-Token` into the {@link Visitor} it acts for.
 */
export class ChannelIdentity {
  /** Opened secrets by sealed value: a rotation writes a new sealed value, so it is never served stale. */
  private readonly opened = new LruCache<string, string>(1000);

  constructor(private readonly deps: ChannelIdentityDeps) {}

  /**
   * Sets the channel's mode and, when it has none yet (and needs one) or `rotateSecret` asks, gives it a new secret,
   * answered once. Audited as `channel.identity_changed` (a new mode) and `channel.identity_secret_rotated` (never
   * with the secret). Concurrent changes of one channel are serialised by compare-and-set on the stored secret.
   */
  async configure(
    companyId: string,
    channelId: string,
    change: IdentityChange,
    actor: { id: string; ip?: string },
  ): Promise<IdentitySettings> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const channel = await this.deps.channels.find(companyId, channelId);
      if (!channel) throw channelNotFound();
      const result = await this.apply(channel, change, actor);
      if (result) return result;
    }
    throw new ConflictError('rotation_conflict', 'The channel kept changing meanwhile; try again.');
  }

  /**
   * The visitor this request acts for, from its `X-Visitor-Token` (docs/design.md "Visitor identity"): none on a
   * channel whose identity is `off` (the header is ignored), none without a token on an `optional` one; 401
   * `visitor_token_required` without one on a `required` channel, 401 `visitor_token_invalid` for one that does not
   * verify with the channel's current secret (or its previous one, within 24 h of a rotation).
   */
  identify(channel: Channel, token: string | undefined, nowMs = Date.now()): Visitor | undefined {
    const { mode } = channel.identity;
    if (mode === 'off') return undefined;
    if (token === undefined || token === '') {
      if (mode === 'required') throw visitorTokenRequired();
      return undefined;
    }
    const secrets = this.verifyingSecrets(channel, nowMs);
    if (secrets.length === 0) throw visitorTokenInvalid('This channel has no identity secret yet.');
    try {
      const verified = verifyVisitorToken(token, {
        secrets,
        nowSeconds: Math.floor(nowMs / 1000),
        toleranceSeconds: this.deps.toleranceSeconds,
      });
      return { ...verified, key: visitorKeyOf(channel.id, verified.id), channelId: channel.id };
    } catch (err) {
      if (err instanceof VisitorTokenRefusal) throw visitorTokenInvalid(err.message);
      throw err;
    }
  }

  /** The secrets a token of this channel may be signed with now: the current one, and the previous within 24 h. */
  private verifyingSecrets(channel: Channel, nowMs: number): string[] {
    const { sealedSecret, sealedPreviousSecret, previousUntil } = channel.identity;
    const secrets: string[] = [];
    if (sealedSecret) secrets.push(this.open(channel, sealedSecret, 'current'));
    if (sealedPreviousSecret && previousUntil && Date.parse(previousUntil) > nowMs)
      secrets.push(this.open(channel, sealedPreviousSecret, 'previous'));
    return secrets;
  }

  private open(channel: Channel, sealed: string, slot: SecretSlot): string {
    const aad = identitySecretAad(channel.companyId, channel.id, slot);
    const cacheKey = `${aad}|${sealed}`;
    let secret = this.opened.get(cacheKey);
    if (secret === undefined) {
      secret = this.deps.sealer.open(sealed, aad);
      this.opened.set(cacheKey, secret);
    }
    return secret;
  }

  /** One attempt of `configure`; `undefined` when another change of the channel came first. */
  private async apply(
    channel: Channel,
    change: IdentityChange,
    actor: { id: string; ip?: string },
  ): Promise<IdentitySettings | undefined> {
    const { sealer } = this.deps;
    const before = channel.identity;
    const needsFirstSecret = change.mode !== 'off' && before.sealedSecret === null;
    const newSecret = needsFirstSecret || change.rotateSecret ? generateIdentitySecret() : undefined;
    const at = new Date();
    const set: Partial<Record<string, string | null>> = { identity_mode: change.mode };
    if (newSecret !== undefined) {
      set.identity_secret = sealer.seal(
        newSecret,
        identitySecretAad(channel.companyId, channel.id, 'current'),
      );
      if (before.sealedSecret) {
        const previous = this.open(channel, before.sealedSecret, 'current');
        set.identity_previous_secret = sealer.seal(
          previous,
          identitySecretAad(channel.companyId, channel.id, 'previous'),
        );
        set.identity_previous_until = new Date(at.getTime() + PREVIOUS_SECRET_GRACE_MS).toISOString();
      }
    }
    const changed = await this.deps.db.transaction().execute(async (trx) => {
      let update = trx
        .updateTable('channels')
        .set(set)
        .where('id', '=', channel.id)
        .where('company_id', '=', channel.companyId);
      update =
        before.sealedSecret === null
          ? update.where('identity_secret', 'is', null)
          : update.where('identity_secret', '=', before.sealedSecret);
      const result = await update.executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      const event = {
        companyId: channel.companyId,
        actor: actor.id,
        subject: channel.id,
        ip: actor.ip ?? null,
      };
      if (change.mode !== before.mode) {
        await this.deps.audit.record(
          {
            ...event,
            type: 'channel.identity_changed',
            details: { mode: change.mode, previous_mode: before.mode },
          },
          trx,
        );
      }
      if (newSecret !== undefined) {
        await this.deps.audit.record(
          {
            ...event,
            type: 'channel.identity_secret_rotated',
            details: { first: before.sealedSecret === null },
          },
          trx,
        );
      }
      return true;
    });
    if (!changed) return undefined;
    return {
      channel_id: channel.id,
      identity: change.mode,
      ...(newSecret !== undefined ? { identity_secret: newSecret } : {}),
    };
  }
}
