import { peekUnread } from '@parley/webchat-sdk';
import { builder, icon } from './dom.ts';
import { fill, type Language, launcherTexts, resolveLanguage } from './language.ts';
import { launcherCss } from './launcher-styles.ts';
import type { ChatModule, ChatPanel, WidgetHandle, WidgetOptions } from './options.ts';
import { type StyleSheets, styleSheets } from './stylesheets.ts';
import { applyReadableColours } from './theme.ts';

const CHAT_ICON =
  'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2zm3 6v2h10v-2H7zm0-3v2h10V7H7zm0 6v2h7v-2H7z';

/** Where the launcher finds the rest of the widget, and Parley's copy of its CSS for old browsers. */
export interface LauncherAssets {
  /** Loads the chat (chat.ts): a dynamic import of Parley's second asset, or of the module itself in a bundle. */
  loadChat(): Promise<ChatModule>;
  /** The widget's whole stylesheet as served by Parley (stylesheets.ts: the fallback without constructable sheets). */
  cssHref?: string;
}

/**
 * The launcher: what a page loads first (`/widget.js`, ≤ 15 KB gzipped). It draws the button in a Shadow DOM (so
 * neither side's styles leak), shows the unread count of a returning visitor's conversation from one REST call, and
 * loads the chat — the SDK, the realtime client, markdown and the views — only when the visitor opens it, or when a
 * message is waiting for them. Hovering or focusing the button starts the download early.
 */
export function mountLauncher(options: WidgetOptions, assets: LauncherAssets): WidgetHandle {
  return new Launcher(options, assets);
}

class Launcher implements WidgetHandle {
  private readonly doc: Document;
  private readonly host: HTMLElement;
  private readonly root: HTMLElement;
  private readonly button: HTMLButtonElement;
  private readonly badge: HTMLElement;
  private readonly loadError: HTMLElement;
  private readonly styles: StyleSheets;
  private readonly language: Language;
  private readonly texts: ReturnType<typeof launcherTexts>;
  private readonly openKey: string;
  private module: Promise<ChatModule> | null = null;
  private panel: ChatPanel | null = null;
  private mounting: Promise<ChatPanel | null> | null = null;
  private isOpen = false;
  private destroyed = false;

  constructor(
    private readonly options: WidgetOptions,
    private readonly assets: LauncherAssets,
  ) {
    const container = options.container ?? document.body;
    this.doc = container.ownerDocument;
    const ownTexts = Object.keys(options.strings ?? {}).length > 0;
    this.language = resolveLanguage(options.lang, this.doc, ownTexts);
    this.texts = { ...launcherTexts(this.language), ...pickTexts(options.strings) };
    this.host = this.doc.createElement('div');
    this.host.setAttribute('data-parley-widget', '');
    const shadow = this.host.attachShadow({ mode: 'open' });
    this.styles = styleSheets(shadow, { nonce: options.nonce, href: assets.cssHref });
    this.styles.add(launcherCss);
    const el = builder(this.doc);
    this.root = el('div', { class: 'root', lang: this.language.tag, dir: this.language.dir });
    this.button = el('button', {
      type: 'button',
      class: 'launcher',
      'aria-controls': 'parley-panel',
      'aria-expanded': 'false',
      'aria-label': this.texts.openChat,
    });
    // Unread replies while the panel is closed (hidden from assistive tech: the launcher's label says it).
    this.badge = el('span', { class: 'badge', 'aria-hidden': 'true' });
    this.badge.hidden = true;
    this.button.append(icon(this.doc, CHAT_ICON), this.badge);
    this.loadError = el('p', { class: 'load-error', role: 'alert' });
    this.loadError.hidden = true;
    this.root.append(this.loadError, this.button);
    shadow.append(this.root);
    container.append(this.host);
    applyReadableColours(this.root, options.accentColor);

    this.button.addEventListener('click', () => (this.isOpen ? this.close() : this.open()));
    // Whoever points at or tabs to the button is likely to open it: fetch the chat now, so opening is instant.
    for (const event of ['pointerenter', 'focus', 'touchstart'])
      this.button.addEventListener(event, () => void this.loadModule().catch(() => undefined), {
        passive: true,
      });
    this.openKey = `parley:${options.companyId}:widget-open`;
    if (options.open || readFlag(this.openKey)) this.open();
    else void this.peekUnread();
  }

  get chat() {
    return this.panel?.chat ?? null;
  }

  open(): void {
    if (this.destroyed) return;
    this.isOpen = true;
    this.root.dataset.open = 'true';
    this.button.setAttribute('aria-expanded', 'true');
    this.loadError.hidden = true;
    writeFlag(this.openKey, true);
    this.showUnread(0);
    void this.mountPanel().then((panel) => {
      if (panel && this.isOpen) panel.open();
    });
  }

  close(): void {
    this.isOpen = false;
    delete this.root.dataset.open;
    this.button.setAttribute('aria-expanded', 'false');
    writeFlag(this.openKey, false);
    this.showUnread(0);
    this.panel?.close();
    // Focus returns to the control that opened the panel (WAI-ARIA dialog pattern).
    this.button.focus();
  }

  destroy(): void {
    this.destroyed = true;
    this.panel?.destroy();
    this.host.remove();
  }

  /** The chat module, fetched once (a failed fetch is tried again next time). */
  private loadModule(): Promise<ChatModule> {
    this.module ??= this.assets.loadChat().catch((err: unknown) => {
      this.module = null;
      throw err;
    });
    return this.module;
  }

  /** The chat panel, mounted once the module is here; a failure says so by the button and leaves it closed. */
  private mountPanel(): Promise<ChatPanel | null> {
    this.mounting ??= (async () => {
      this.button.setAttribute('aria-busy', 'true');
      try {
        const module = await this.loadModule();
        if (this.destroyed) return null;
        this.panel = module.mountPanel({
          doc: this.doc,
          root: this.root,
          styles: this.styles,
          options: this.options,
          language: this.language,
          requestClose: () => this.close(),
          showUnread: (count) => this.showUnread(count),
        });
        return this.panel;
      } catch {
        this.mounting = null;
        this.isOpen = false;
        delete this.root.dataset.open;
        this.button.setAttribute('aria-expanded', 'false');
        this.loadError.textContent = this.texts.loadFailed;
        this.loadError.hidden = false;
        return null;
      } finally {
        this.button.removeAttribute('aria-busy');
      }
    })();
    return this.mounting;
  }

  /**
   * Before the chat is loaded, the button shows what the conversation to resume holds unread (one REST call); a
   * message waiting for the visitor also fetches the chat, so opening it shows the message at once.
   */
  private async peekUnread(): Promise<void> {
    const count = await peekUnread({
      ...this.options.sdk,
      baseUrl: this.options.baseUrl,
      companyId: this.options.companyId,
      channelId: this.options.channelId,
      storage: this.options.storage ?? this.options.sdk?.storage,
      ...(this.options.visitorToken ? { visitorToken: this.options.visitorToken } : {}),
      ...(this.options.getVisitorToken ? { getVisitorToken: this.options.getVisitorToken } : {}),
    }).catch(() => 0);
    if (this.panel || this.isOpen || this.destroyed) return;
    this.showUnread(count);
    if (count > 0) void this.loadModule().catch(() => undefined);
  }

  /** The badge, and the button's label naming the number for screen readers ("Open chat (2 unread)"). */
  private showUnread(count: number): void {
    const shown = this.isOpen ? 0 : count;
    this.badge.hidden = shown === 0;
    this.badge.textContent = shown > 99 ? '99+' : String(shown);
    const label = this.isOpen ? this.texts.closeChat : this.texts.openChat;
    this.button.setAttribute(
      'aria-label',
      shown > 0 ? fill(this.texts.launcherUnread, { label, count: shown }) : label,
    );
  }
}

/** The launcher's own texts among a site's overrides. */
function pickTexts(strings: WidgetOptions['strings']): Partial<ReturnType<typeof launcherTexts>> {
  const picked: Record<string, string> = {};
  for (const key of ['openChat', 'closeChat', 'launcherUnread', 'loadFailed'] as const)
    if (strings?.[key] !== undefined) picked[key] = strings[key];
  return picked;
}

function readFlag(key: string): boolean {
  try {
    return globalThis.sessionStorage?.getItem(key) === '1';
  } catch {
    return false;
  }
}

function writeFlag(key: string, value: boolean): void {
  try {
    if (value) globalThis.sessionStorage?.setItem(key, '1');
    else globalThis.sessionStorage?.removeItem(key);
  } catch {
    // Remembering the open panel is a nicety; a blocked sessionStorage changes nothing else.
  }
}
