import { LruCache } from '../../oauth/lru-cache.ts';
import type { Visitor } from '../visitor.ts';

/**
 * The conversations' side of a visitor's identity (conversations/conversations.service.ts), typed here: conversations/
 * builds on what identity/ serves (the SDK session), so identity/ must not import it back.
 */
export interface VisitorConversations {
  hasAnonymousConversations(companyId: string, sessionId: string, channelId: string): Promise<boolean>;
  attachSessionToVisitor(companyId: string, sessionId: string, visitor: Visitor): Promise<string[]>;
  knownVisitorProfile(
    companyId: string,
    visitorKey: string,
  ): Promise<{ name: string | null; email: string | null } | undefined>;
  updateVisitorProfile(companyId: string, visitor: Visitor): Promise<void>;
}

/**
 * Keeps the store in step with what verified requests say about their visitor: an identified request attaches the
 * conversations its session started anonymously in the channel (they stay the visitor's, and the session's
 * anonymous realtime connections lose them), and a token carrying a
 * new name or email updates it on all the visitor's conversations (what the inbox shows; once per profile and node,
 * remembered in a bounded cache). A token without a name or email keeps what an earlier one said.
 */
export class VisitorDirectory {
  /** Per visitor key: the profile last written (the JSON of id, name, email). */
  private readonly profiles = new LruCache<string, string>(10_000);

  constructor(
    private readonly conversations: VisitorConversations,
    /**
     * Told which conversations left the anonymous session for the visitor, once that is stored: the session's
     * realtime connections lose them (realtime/channel-access.ts `endSessionSubscriptions`).
     */
    private readonly onAttached: (
      companyId: string,
      sessionId: string,
      conversationIds: string[],
    ) => Promise<void>,
  ) {}

  /** Records the visitor of a verified request and answers it with the name and email known for it. */
  async remember(companyId: string, sessionId: string, token: Visitor): Promise<Visitor> {
    const visitor = await this.withKnownProfile(companyId, token);
    // A read first (an indexed lookup that finds nothing on almost every request), so the write happens only when
    // there is something to attach — whichever node served the session before.
    if (await this.conversations.hasAnonymousConversations(companyId, sessionId, visitor.channelId)) {
      const attached = await this.conversations.attachSessionToVisitor(companyId, sessionId, visitor);
      await this.onAttached(companyId, sessionId, attached);
    }
    const profile = JSON.stringify([visitor.id, visitor.name, visitor.email, visitor.attributes ?? null]);
    if (this.profiles.get(visitor.key) !== profile) {
      await this.conversations.updateVisitorProfile(companyId, visitor);
      this.profiles.set(visitor.key, profile);
    }
    return visitor;
  }

  private async withKnownProfile(companyId: string, token: Visitor): Promise<Visitor> {
    if (token.name !== null && token.email !== null) return token;
    const cached = this.profiles.get(token.key);
    const known = cached
      ? (([, name, email]) => ({ name, email }))(JSON.parse(cached) as [string, string | null, string | null])
      : await this.conversations.knownVisitorProfile(companyId, token.key);
    return { ...token, name: token.name ?? known?.name ?? null, email: token.email ?? known?.email ?? null };
  }
}
