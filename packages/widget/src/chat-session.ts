import { Webchat } from '@parley/webchat-sdk';
import type { WidgetOptions } from './options.ts';

const START_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000, 15000];
const STABLE_AFTER_MS = 60_000;

/** What the session tells the view. */
export interface SessionView {
  /** A new SDK client, before it starts: attach listeners (they are checked against `session.chat`). */
  attach(chat: Webchat): void;
  starting(): void;
  started(chat: Webchat): void;
  /** Starting failed or the chat ended: say so, with a "Try again" that starts at once. */
  failed(retryNow: () => void, offline: boolean): void;
}

/**
 * The chat's life: one SDK client started on first open, started again with backoff when the server or network is
 * not there (a few times, then on "Try again" or when the browser comes back online), and replaced when the SDK
 * gives up on a connection (e.g. a refused token after the server's secret changed).
 */
export class ChatSession {
  chat: Webchat | null = null;
  private starting = false;
  private destroyed = false;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly options: WidgetOptions,
    private readonly view: SessionView,
    private readonly win: Window | null,
  ) {
    win?.addEventListener('online', this.onOnline);
  }

  async ensureStarted(): Promise<void> {
    if (this.chat || this.starting || this.destroyed) return;
    this.starting = true;
    if (this.timer) clearTimeout(this.timer);
    this.view.starting();
    const chat = this.newWebchat();
    this.view.attach(chat);
    try {
      await chat.start();
      // destroy() while starting found no chat to close: close it here, or it would stay connected off the page.
      if (this.destroyed) {
        chat.close();
        return;
      }
      this.chat = chat;
      // The retry budget refills only after a start that lasted, so a server that accepts and then refuses at
      // once cannot make the widget restart forever.
      setTimeout(() => {
        if (this.chat === chat && chat.state === 'connected') this.attempt = 0;
      }, STABLE_AFTER_MS);
      this.view.started(chat);
    } catch {
      chat.close();
      // The server or network is not there yet.
      this.retryLater(false);
    } finally {
      this.starting = false;
    }
  }

  /** The SDK ended `chat` for good (not a close of ours): start a new one, with backoff. */
  ended(chat: Webchat): void {
    if (this.chat !== chat) return;
    this.chat = null;
    chat.close();
    this.retryLater(true);
  }

  destroy(): void {
    this.destroyed = true;
    if (this.timer) clearTimeout(this.timer);
    this.win?.removeEventListener('online', this.onOnline);
    this.chat?.close();
  }

  /** Starts again a few times with backoff, then leaves it to the visitor's "Try again" (shown at once too). */
  private retryLater(offline: boolean): void {
    const delay = START_RETRY_DELAYS_MS[this.attempt++];
    if (delay !== undefined) this.timer = setTimeout(() => void this.ensureStarted(), delay);
    this.view.failed(() => {
      this.attempt = 0;
      void this.ensureStarted();
    }, offline);
  }

  private readonly onOnline = () => {
    if (this.chat || this.destroyed) return;
    this.attempt = 0;
    void this.ensureStarted();
  };

  private newWebchat(): Webchat {
    const o = this.options;
    return new Webchat({
      ...o.sdk,
      baseUrl: o.baseUrl,
      companyId: o.companyId,
      channelId: o.channelId,
      storage: o.storage ?? o.sdk?.storage,
      ...(o.visitorToken ? { visitorToken: o.visitorToken } : {}),
      ...(o.getVisitorToken ? { getVisitorToken: o.getVisitorToken } : {}),
    });
  }
}
