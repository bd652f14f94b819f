import type { AttachmentView, MessageSnapshot, NoteView, ReceivedSnapshot } from '@parley/webchat-protocol';
import type { InboxConversationDetail } from '@parley/wire-types';
import { api, upload } from '../../api.ts';
import { statusArea } from '../../components/page-parts.ts';
import { h, replaceChildren } from '../../dom.ts';
import { actionBar, labelsEditor, stateText } from './actions.ts';
import { showHandoverSummary, suggestionsBox, summariseButton, summaryBox } from './ai-help.ts';
import { Composer, type ReplyInput } from './composer.ts';
import type { Drafts } from './drafts.ts';
import type { InboxLive } from './live.ts';
import type { Colleague } from './mentions.ts';
import { type ConversationView, hasWorkspaceFields, unreadOf, visitorLabel } from './model.ts';
import { handoverSummaryOf, Transcript } from './transcript.ts';
import { visitorPanel } from './visitor-panel.ts';

export interface PaneContext {
  me: string;
  drafts: Drafts;
  live: InboxLive;
  labels: () => string[];
  colleagues: () => Promise<Colleague[]>;
  /** The list changed behind this pane's action (re-read it). */
  refreshList(): void;
  markRead(id: string): void;
  openConversation(id: string): void;
  isTyping(id: string): boolean;
  /** Small screens: show the list / the visitor. */
  showView(view: 'list' | 'conversation' | 'visitor'): void;
}

/**
 * One open conversation: header with the one ownership action, resolve, status, snooze and labels; the hand-over
 * summary and suggested replies at the top; the transcript opened at the newest message (or the unread
 * separator), kept live; the composer docked at the bottom. Its visitor panel is rendered beside it.
 */
export class ConversationPane {
  readonly composer: Composer;
  readonly transcript: Transcript;
  readonly visitor: HTMLElement;
  private conversation: ConversationView;
  private readonly workspace: boolean;
  private readonly head = h('div', { class: 'conv-header' });
  private readonly feedback = statusArea();
  private readonly liveNotice = h('p', { class: 'notice warning live-notice', role: 'status', hidden: true });
  /** "Summarise", on the labels' row of the header (a row of its own left the transcript too little height). */
  private summarise: HTMLButtonElement | null = null;
  private readonly summary: HTMLElement;
  readonly typingNote: HTMLElement;

  constructor(
    private readonly pane: HTMLElement,
    detail: InboxConversationDetail,
    private readonly ctx: PaneContext,
  ) {
    this.conversation = withWorkspaceFields(detail);
    this.workspace = hasWorkspaceFields(detail.conversation) || detail.visitor !== undefined;
    this.transcript = new Transcript(detail.messages, unreadOf(detail.conversation));
    this.typingNote = h(
      'p',
      { class: 'typing-note', role: 'status', hidden: !ctx.isTyping(this.id) },
      'Visitor is typing…',
    );
    this.composer = new Composer({
      conversationId: this.id,
      drafts: ctx.drafts,
      colleagues: ctx.colleagues,
      sendReply: (input) => this.sendReply(input),
      sendNote: (text, mentions) => this.sendNote(text, mentions),
    });
    this.visitor = visitorPanel(this.conversation, detail.visitor, (id) => ctx.openConversation(id));
    const summary = summaryBox(detail.summary?.text);
    this.summary = summary;
    this.summarise = this.workspace ? summariseButton(this.id, summary) : null;
    this.setState(this.conversation);
    // The AI help above the transcript scrolls within a bounded height (`.ai-help` in packages/portal/src/styles.css): a long summary and
    // three suggestions used to push the transcript out of the pane. Focusable, so a keyboard can scroll it.
    const aiHelp = h(
      'div',
      { class: 'ai-help', role: 'region', 'aria-label': 'AI help', tabindex: 0 },
      summary,
    );
    replaceChildren(
      pane,
      this.head,
      this.feedback.el,
      aiHelp,
      this.liveNotice,
      this.transcript.el,
      this.typingNote,
      this.isOpen()
        ? this.composer.el
        : h('p', { class: 'muted closed-note' }, 'This conversation is resolved.'),
    );
    this.transcript.open();
    void suggestionsBox(this.id, (text) => this.composer.insert(text)).then((box) => {
      if (box && pane.contains(this.transcript.el)) summary.after(box);
    });
    this.follow();
  }

  get id(): string {
    return this.conversation.id;
  }

  get current(): ConversationView {
    return this.conversation;
  }

  private isOpen(): boolean {
    return this.conversation.status !== 'closed' && this.conversation.status !== 'resolved';
  }

  /** A new state of this conversation (an action's answer, or the inbox channel's entry). */
  setState(c: ConversationView): void {
    const wasOpen = this.isOpen();
    this.conversation = { ...this.conversation, ...c };
    const opts = {
      me: this.ctx.me,
      workspace: this.workspace,
      changed: (next: ConversationView) => {
        this.setState(next);
        this.ctx.refreshList();
      },
      failed: (err: unknown) => this.feedback.say('error', err instanceof Error ? err.message : 'Failed.'),
    };
    replaceChildren(
      this.head,
      h(
        'div',
        { class: 'conv-title' },
        h(
          'button',
          { type: 'button', class: 'secondary small narrow-only', onclick: () => this.ctx.showView('list') },
          '← Conversations',
        ),
        h('h2', {}, visitorLabel(this.conversation)),
        h('span', { class: 'muted conv-id' }, `#${this.id.slice(0, 8)}`),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary small narrow-only',
            onclick: () => this.ctx.showView('visitor'),
          },
          'Visitor',
        ),
      ),
      h('p', { class: 'conv-state' }, stateText(this.conversation)),
      actionBar(this.conversation, opts),
      h(
        'div',
        { class: 'conv-tools' },
        this.workspace ? labelsEditor(this.conversation, this.ctx.labels(), opts) : null,
        this.summarise,
      ),
    );
    // Resolved or reopened: the composer comes or goes with it.
    if (wasOpen !== this.isOpen() && this.pane.contains(this.transcript.el))
      this.ctx.openConversation(this.id);
  }

  /** The first action of the bar ("Take over", "Assign to me"): the `a` shortcut. */
  clickAction(label: string): boolean {
    const b = this.head.querySelector<HTMLButtonElement>(`button[data-action="${label}"]`);
    b?.click();
    return Boolean(b);
  }

  private async refresh(): Promise<void> {
    const detail = await api<InboxConversationDetail>('GET', `/inbox/conversations/${this.id}`);
    this.setState(withWorkspaceFields(detail));
  }

  private async sendReply(input: ReplyInput): Promise<void> {
    const uploaded: AttachmentView[] = [];
    for (const file of input.files)
      uploaded.push(await upload<AttachmentView>(`/inbox/conversations/${this.id}/attachments`, file));
    const sent = await api<MessageSnapshot>('POST', `/inbox/conversations/${this.id}/messages`, {
      content: input.content,
      attachment_ids: uploaded.map((a) => a.id),
      ...(input.quickReplies.length > 0 ? { quick_replies: input.quickReplies } : {}),
    });
    this.transcript.show(sent);
    this.transcript.el.scrollTop = this.transcript.el.scrollHeight;
    await this.refresh();
    this.ctx.refreshList();
  }

  private async sendNote(text: string, mentions: string[]): Promise<void> {
    const note = await api<NoteView>('POST', `/inbox/conversations/${this.id}/notes`, {
      text,
      ...(mentions.length > 0 ? { mentions } : {}),
    });
    this.transcript.show(note);
    this.transcript.el.scrollTop = this.transcript.el.scrollHeight;
  }

  /**
   * A note of this conversation from the inbox channel (a colleague's, a hand-over summary, an action call), shown
   * without a reload; the agent's own note comes back this way too and replaces itself (same id). A new hand-over
   * summary goes into the box at the top, where the transcript's marker points.
   */
  showNote(note: NoteView): void {
    this.transcript.show(note);
    const summary = handoverSummaryOf(note);
    if (summary !== undefined) showHandoverSummary(this.summary, summary);
  }

  /** Live: every envelope of this conversation, stale sequences dropped; a visitor message counts as read. */
  private follow(): void {
    const off = (why: string) => {
      if (!this.transcript.el.isConnected) return;
      this.liveNotice.textContent = `Live updates are off: ${why}`;
      this.liveNotice.hidden = false;
      this.pane.removeAttribute('data-live');
    };
    this.pane.removeAttribute('data-live');
    void this.ctx.live.follow(
      this.id,
      {
        onMessage: (m: ReceivedSnapshot, complete) => {
          this.transcript.show(m);
          if (m.role === 'system' && complete) void this.refresh().catch(() => undefined);
          if (m.role === 'user') {
            this.typingNote.hidden = true;
            this.ctx.markRead(this.id);
          }
        },
        onLive: () => {
          this.liveNotice.hidden = true;
          // Tests (and anyone watching the pane) wait for this to know the transcript on screen is streaming.
          this.pane.setAttribute('data-live', 'true');
        },
        onOff: off,
      },
      () => this.transcript.el.isConnected,
    );
  }

  /** The page's connection went down (or came back). */
  connectionTrouble(why: string | undefined): void {
    if (!why) return;
    this.liveNotice.textContent = `Live updates are off: ${why}`;
    this.liveNotice.hidden = false;
    this.pane.removeAttribute('data-live');
  }
}

/** The conversation with the status, snooze time and labels the detail carries beside it. */
const withWorkspaceFields = (detail: InboxConversationDetail): ConversationView => ({
  ...detail.conversation,
  status: detail.status,
  snoozed_until: detail.snoozed_until,
  labels: detail.labels,
});
