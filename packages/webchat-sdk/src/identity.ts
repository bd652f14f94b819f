import { WebchatError } from './errors.ts';
import type { WebchatOptions } from './options.ts';
import type { RestClient } from './rest-client.ts';
import { defaultStorage, SessionStore } from './session-storage.ts';
import { VisitorTokens } from './visitor-tokens.ts';
import type { Conversation } from './wire.ts';

/** What identity reads of the options. */
export type IdentityOptions = Pick<
  WebchatOptions,
  | 'storage'
  | 'companyId'
  | 'channelId'
  | 'visitorToken'
  | 'getVisitorToken'
  | 'conversationId'
  | 'newConversation'
>;

/**
 * Who the visitor is and which conversation is theirs to resume: the persisted session id (`X-Session-Id`), the
 * verified visitor's token if any (`X-Visitor-Token`), and the conversation last open in this channel.
 */
export class VisitorIdentity {
  readonly tokens: VisitorTokens;
  private readonly session: SessionStore;
  private currentSessionId: string;

  constructor(private readonly options: IdentityOptions) {
    this.session = new SessionStore(
      options.storage ?? defaultStorage(),
      options.companyId,
      options.channelId,
    );
    this.currentSessionId = this.session.sessionId();
    this.tokens = new VisitorTokens(options);
  }

  get sessionId(): string {
    return this.currentSessionId;
  }

  /** Whether the visitor is identified (a visitor token, or a `getVisitorToken` callback, is in use). */
  get identified(): boolean {
    return this.tokens.identified;
  }

  /** Uses `token` from now on (the caller reconnects as that visitor). */
  identify(token: string): void {
    this.tokens.set(token);
  }

  /**
   * Forgets the visitor: the token and its callback, the session id (a new one is made) and the conversation to
   * resume. Answers the new session id.
   */
  forget(): string {
    this.tokens.clear();
    this.currentSessionId = this.session.resetSessionId();
    this.session.setCurrentConversationId(null);
    return this.currentSessionId;
  }

  /** Remembers the open conversation, so a reload resumes it. */
  remember(conversation: Conversation): void {
    this.session.setCurrentConversationId(conversation.id);
  }

  /**
   * Step 1 of the setup order: the conversation the visitor had open, or — for a verified visitor on a device that
   * has none yet — their latest open conversation from any device, or a new one.
   */
  async resumeOrCreate(
    rest: Pick<RestClient, 'listConversations' | 'createConversation'>,
  ): Promise<Conversation> {
    const wanted = this.options.newConversation
      ? null
      : (this.options.conversationId ?? this.session.currentConversationId());
    if (wanted || (this.identified && !this.options.newConversation)) {
      const existing = this.toResume(await rest.listConversations(), wanted);
      if (existing) return existing;
      if (this.options.conversationId) throw notFound();
    }
    return rest.createConversation();
  }

  /**
   * The unread count of the conversation {@link resumeOrCreate} would resume, over REST and without connecting:
   * 0 when there is none.
   */
  async peekUnread(rest: Pick<RestClient, 'listConversations'>): Promise<number> {
    const wanted = this.options.conversationId ?? this.session.currentConversationId();
    if (!wanted && !this.identified) return 0;
    return Number(this.toResume(await rest.listConversations(), wanted)?.unread_count ?? 0);
  }

  /** The stored (or asked-for) conversation, else a verified visitor's newest open one. */
  private toResume(listed: readonly Conversation[], wanted: string | null): Conversation | undefined {
    return wanted ? listed.find((c) => c.id === wanted) : latestOpen(listed);
  }
}

export function notFound(): WebchatError {
  return new WebchatError('not_found', 'no such conversation in this session');
}

/** A verified visitor's conversation to resume on a device that has none stored: their newest open one. */
function latestOpen(conversations: readonly Conversation[]): Conversation | undefined {
  let newest: Conversation | undefined;
  for (const c of conversations)
    if (c.status !== 'closed' && (!newest || c.created_at > newest.created_at)) newest = c;
  return newest;
}
