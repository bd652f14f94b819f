/**
 * Entry of the `/widget.js` bundle. Reads its own `<script>` tag:
 * `data-company` (required), `data-channel`, `data-base-url` (default: where the script came from),
 * `data-title`, `data-open`. Exposes `window.Parley = { mountWidget, createWebchat, widget }` for sites that
 * want to configure it in code (translations, opening from their own button).
 */
import { createWebchat, memoryStorage } from '@parley/webchat-sdk';
import { defaultStrings } from './strings.ts';
import { mountWidget, type WidgetHandle } from './widget.ts';

interface ParleyGlobal {
  mountWidget: typeof mountWidget;
  createWebchat: typeof createWebchat;
  memoryStorage: typeof memoryStorage;
  defaultStrings: typeof defaultStrings;
  widget: WidgetHandle | null;
}

const script = document.currentScript as HTMLScriptElement | null;
const api: ParleyGlobal = { mountWidget, createWebchat, memoryStorage, defaultStrings, widget: null };
(window as unknown as { Parley: ParleyGlobal }).Parley = api;

const companyId = script?.dataset.company;
if (script && companyId) {
  const baseUrl = script.dataset.baseUrl ?? new URL(script.src, location.href).origin;
  const mount = () => {
    api.widget = mountWidget({
      baseUrl,
      companyId,
      channelId: script.dataset.channel || undefined,
      open: script.dataset.open === 'true',
      strings: script.dataset.title ? { title: script.dataset.title } : undefined,
    });
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount, { once: true });
}
