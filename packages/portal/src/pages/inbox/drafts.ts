/** The part of the Web Storage API drafts need (localStorage in the page; a Map-backed one in unit tests). */
export interface DraftStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface Draft {
  text: string;
  mode: 'reply' | 'note';
}

const PREFIX = 'parley.inbox.draft.';

/**
 * What an agent typed and did not send, per conversation and per signed-in user (two agents sharing a browser
 * never see each other's drafts), kept across reloads. Storage errors (quota, private mode) lose the draft, never
 * the page.
 */
export class Drafts {
  constructor(
    private readonly storage: DraftStorage | undefined,
    private readonly userId: string,
  ) {}

  private key(conversationId: string): string {
    return `${PREFIX}${this.userId}.${conversationId}`;
  }

  get(conversationId: string): Draft | undefined {
    try {
      const raw = this.storage?.getItem(this.key(conversationId));
      if (!raw) return undefined;
      const parsed = JSON.parse(raw) as Partial<Draft>;
      if (typeof parsed.text !== 'string') return undefined;
      return { text: parsed.text, mode: parsed.mode === 'note' ? 'note' : 'reply' };
    } catch {
      return undefined;
    }
  }

  /** An empty text forgets the draft (sent, or erased by the agent). */
  set(conversationId: string, draft: Draft): void {
    try {
      if (draft.text.trim() === '') this.storage?.removeItem(this.key(conversationId));
      else this.storage?.setItem(this.key(conversationId), JSON.stringify(draft));
    } catch {
      // Full or unavailable storage: the draft lives only on screen.
    }
  }

  clear(conversationId: string): void {
    try {
      this.storage?.removeItem(this.key(conversationId));
    } catch {
      // As above.
    }
  }
}
