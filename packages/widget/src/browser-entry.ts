/**
 * Entry of the `/widget.js` bundle. Reads its own `<script>` tag:
 * `data-company` (required), `data-channel`, `data-base-url` (default: where the script came from),
 * `data-title`, `data-open`, `data-visitor-token` (a verified visitor). Exposes
 * `window.Parley = { init, mountWidget, createWebchat, widget }` for sites that configure it in code:
 * `Parley.init({ getVisitorToken })` (translations, a token callback, opening from their own button).
 */
import { createWebchat, memoryStorage } from '@parley/webchat-sdk';
import { defaultStrings } from './strings.ts';
import { mountWidget, type WidgetHandle, type WidgetOptions } from './widget.ts';

/** What `Parley.init` takes: the widget's options; those the script tag gives may be left out. */
export type InitOptions = Partial<WidgetOptions>;

interface ParleyGlobal {
  /**
   * Mounts the widget with these options on top of the script tag's (`companyId`, `channelId`, …), replacing the
   * one the tag mounted. E.g. `Parley.init({ getVisitorToken: () => fetch('/me/chat-token').then((r) => r.text()) })`.
   */
  init(options?: InitOptions): WidgetHandle;
  mountWidget: typeof mountWidget;
  createWebchat: typeof createWebchat;
  memoryStorage: typeof memoryStorage;
  defaultStrings: typeof defaultStrings;
  widget: WidgetHandle | null;
}

const script = document.currentScript as HTMLScriptElement | null;

/** The options the script tag's data attributes give. */
function tagOptions(): InitOptions {
  if (!script) return {};
  const data = script.dataset;
  return {
    baseUrl: data.baseUrl ?? new URL(script.src, location.href).origin,
    ...(data.company ? { companyId: data.company } : {}),
    ...(data.channel ? { channelId: data.channel } : {}),
    ...(data.open === 'true' ? { open: true } : {}),
    ...(data.title ? { strings: { title: data.title } } : {}),
    ...(data.visitorToken ? { visitorToken: data.visitorToken } : {}),
  };
}

let initialized = false;
const api: ParleyGlobal = {
  init(options = {}) {
    initialized = true;
    const merged = { ...tagOptions(), ...options } as InitOptions;
    if (!merged.baseUrl || !merged.companyId) throw new Error('Parley.init needs baseUrl and companyId');
    api.widget?.destroy();
    api.widget = mountWidget(merged as WidgetOptions);
    return api.widget;
  },
  mountWidget,
  createWebchat,
  memoryStorage,
  defaultStrings,
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
