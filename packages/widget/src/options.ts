import type {
  createWebchat,
  GetVisitorToken,
  KeyValueStorage,
  Webchat,
  WebchatOptions,
} from '@parley/webchat-sdk';
import type { Language } from './language.ts';
import type { WidgetStrings } from './strings/en.ts';
import type { StyleSheets } from './stylesheets.ts';

/** Options of {@link mountWidget} (and `Parley.init`); the script tag's `data-*` attributes give the same. */
export interface WidgetOptions {
  baseUrl: string;
  companyId: string;
  channelId?: string;
  /**
   * The widget's language as a BCP 47 tag (`data-lang`), e.g. `de` or `pt-BR`; default: the page's `<html lang>`,
   * else the browser's. English, German, French, Spanish, Portuguese, Arabic and Hebrew are built in; Arabic and
   * Hebrew (and any right-to-left language a site brings its own `strings` for) lay the widget out right to left.
   */
  lang?: string;
  /** Overrides for any of the widget's texts (`data-strings`, as JSON): see `defaultStrings` for the keys. */
  strings?: Partial<WidgetStrings>;
  /** The theme colour (`data-color`), any CSS colour; the text on it is chosen for contrast. */
  accentColor?: string;
  /** The nonce of the site's `style-src 'nonce-…'` (`data-nonce`), for browsers without constructable stylesheets. */
  nonce?: string;
  /** Open the panel at once (it also reopens by itself after a reload if it was open). */
  open?: boolean;
  /** Where to attach the widget's host element. Default: `document.body`. */
  container?: HTMLElement;
  storage?: KeyValueStorage;
  /** Extra SDK options (e.g. reconnect tuning). */
  sdk?: Partial<WebchatOptions>;
  /** A verified visitor's token from your backend (`data-visitor-token`): their conversations on every device. */
  visitorToken?: string;
  /** Returns the visitor's token; called again when it expires or is refused (see the SDK's `getVisitorToken`). */
  getVisitorToken?: GetVisitorToken;
}

/** Handle returned by {@link mountWidget}. */
export interface WidgetHandle {
  open(): void;
  close(): void;
  /** The SDK client once the chat has started (after the first open). */
  readonly chat: Webchat | null;
  /** Removes the widget from the page and disconnects. */
  destroy(): void;
}

/** What the launcher hands the chat when it has loaded: the place to draw in and the ways back to the launcher. */
export interface PanelHost {
  doc: Document;
  /** The widget's root element in its shadow root (carries `lang` and `dir`); the panel goes in here. */
  root: HTMLElement;
  styles: StyleSheets;
  options: WidgetOptions;
  language: Language;
  /** The visitor asked to close (✕ or Escape): the launcher closes the panel and takes the focus back. */
  requestClose(): void;
  /** The unread count the launcher's badge shows while the panel is closed. */
  showUnread(count: number): void;
}

/** The chat panel, as the launcher drives it. */
export interface ChatPanel {
  open(): void;
  close(): void;
  destroy(): void;
  readonly chat: Webchat | null;
}

/** The lazily loaded part of the widget (chat.ts): the SDK, the realtime client, markdown and the views. */
export interface ChatModule {
  mountPanel(host: PanelHost): ChatPanel;
  createWebchat: typeof createWebchat;
}
