/**
 * Entry of `/widget.js`, the launcher (≤ 15 KB gzipped; the chat loads later from `/widget/chat.<hash>.js`). Reads
 * its own `<script>` tag: `data-company` (required), `data-channel`, `data-base-url` (default: where the script came
 * from), `data-lang` (BCP 47), `data-strings` (JSON overrides of any text), `data-title`, `data-color`, `data-nonce`,
 * `data-open`, `data-visitor-token` (a verified visitor). Exposes `window.Parley = { init, mountWidget,
 * createWebchat, memoryStorage, defaultStrings, widget }` for sites that configure it in code:
 * `Parley.init({ getVisitorToken })` (translations, a token callback, opening from their own button).
 */
import { type createWebchat, memoryStorage } from '@parley/webchat-sdk';
import { mountLauncher } from './launcher.ts';
import type { ChatModule, WidgetHandle, WidgetOptions } from './options.ts';
import { en } from './strings/en.ts';

/** Names of the chat module and of the stylesheet, with their content hashes (set by build.ts). */
declare const __PARLEY_CHAT_ASSET__: string;
declare const __PARLEY_CSS_ASSET__: string;

/** What `Parley.init` takes: the widget's options; those the script tag gives may be left out. */
export type InitOptions = Partial<WidgetOptions>;

interface ParleyGlobal {
  /**
   * Mounts the widget with these options on top of the script tag's (`companyId`, `channelId`, …), replacing the
   * one the tag mounted. E.g. `Parley.init({ getVisitorToken: () => fetch('/me/chat-token').then((r) => r.text()) })`.
   */
  init(options?: InitOptions): WidgetHandle;
  mountWidget(options: WidgetOptions): WidgetHandle;
  /** The SDK's `createWebchat`, loaded with the chat on first call. */
  createWebchat: typeof createWebchat;
  memoryStorage: typeof memoryStorage;
  defaultStrings: typeof en;
  widget: WidgetHandle | null;
}

const script = document.currentScript as HTMLScriptElement | null;
/** Where the widget's other assets are: beside this script. */
const assetBase = new URL('widget/', script?.src || location.href);
let chatModule: Promise<ChatModule> | null = null;
const loadChat = (): Promise<ChatModule> => {
  // A module script from Parley's origin (the site's `script-src` names it); fetched once, then from cache.
  chatModule ??= (
    import(/* @vite-ignore */ new URL(__PARLEY_CHAT_ASSET__, assetBase).href) as Promise<ChatModule>
  ).catch((err: unknown) => {
    chatModule = null;
    throw err;
  });
  return chatModule;
};
const cssHref = new URL(__PARLEY_CSS_ASSET__, assetBase).href;

/** The options the script tag's data attributes give. */
function tagOptions(): InitOptions {
  if (!script) return {};
  const data = script.dataset;
  const strings = { ...parseStrings(data.strings), ...(data.title ? { title: data.title } : {}) };
  return {
    baseUrl: data.baseUrl ?? new URL(script.src, location.href).origin,
    ...(data.company ? { companyId: data.company } : {}),
    ...(data.channel ? { channelId: data.channel } : {}),
    ...(data.lang ? { lang: data.lang } : {}),
    ...(data.color ? { accentColor: data.color } : {}),
    ...(data.nonce || script.nonce ? { nonce: data.nonce || script.nonce } : {}),
    ...(data.open === 'true' ? { open: true } : {}),
    ...(Object.keys(strings).length > 0 ? { strings } : {}),
    ...(data.visitorToken ? { visitorToken: data.visitorToken } : {}),
  };
}

/** `data-strings`: a JSON object of texts; anything else is ignored (with a warning) rather than breaking the page. */
function parseStrings(json: string | undefined): Record<string, string> {
  if (!json) return {};
  try {
    const parsed: unknown = JSON.parse(json);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return Object.fromEntries(Object.entries(parsed).filter(([, v]) => typeof v === 'string'));
  } catch {
    // Reported below.
  }
  console.warn('parley widget: data-strings must be a JSON object of texts');
  return {};
}

const mountWidget = (options: WidgetOptions) => mountLauncher(options, { loadChat, cssHref });

let initialized = false;
const api: ParleyGlobal = {
  init(options = {}) {
    initialized = true;
    const tag = tagOptions();
    const merged = {
      ...tag,
      ...options,
      ...(tag.strings || options.strings ? { strings: { ...tag.strings, ...options.strings } } : {}),
    } as InitOptions;
    if (!merged.baseUrl || !merged.companyId) throw new Error('Parley.init needs baseUrl and companyId');
    api.widget?.destroy();
    api.widget = mountWidget(merged as WidgetOptions);
    return api.widget;
  },
  mountWidget,
  createWebchat: (options) => loadChat().then((chat) => chat.createWebchat(options)),
  memoryStorage,
  defaultStrings: en,
  widget: null,
};
(window as unknown as { Parley: ParleyGlobal }).Parley = api;

if (script?.dataset.company) {
  // After the page's own scripts of this turn: a `Parley.init(…)` right after the tag (say, with a token callback)
  // mounts the widget once, with its options, instead of after a first anonymous mount.
  const mount = () => {
    if (!initialized) api.init();
  };
  const later = () => setTimeout(mount, 0);
  if (document.body) later();
  else document.addEventListener('DOMContentLoaded', later, { once: true });
}
