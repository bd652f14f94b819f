import type { ConnectionChange, RealtimeTransport } from '@parley/webchat-sdk';
import { builder } from './dom.ts';
import type { WidgetStrings } from './strings/en.ts';

/**
 * The lines under the header: the connection's state when it is not connected (`role="status"`, with "Try again"
 * after a failed start), and, while a WebSocket fallback carries the chat (a network that blocks WebSocket), which
 * one — still live, maybe slower.
 */
export class StatusBar {
  readonly status: HTMLElement;
  readonly transport: HTMLElement;

  constructor(
    private readonly doc: Document,
    private readonly strings: WidgetStrings,
    /** The panel's `data-connection` / `data-transport` carry the state for styles and tests. */
    private readonly panel: HTMLElement,
  ) {
    const el = builder(doc);
    this.status = el('div', { class: 'status', role: 'status' });
    this.status.hidden = true;
    this.transport = el('div', { class: 'transport' });
    this.transport.hidden = true;
  }

  show(text: string, action?: () => void): void {
    this.status.replaceChildren(this.doc.createTextNode(text));
    if (action) {
      const button = builder(this.doc)('button', { type: 'button' }, this.strings.tryAgain);
      button.addEventListener('click', action);
      this.status.append(button);
    }
    this.status.hidden = false;
  }

  hide(): void {
    this.status.hidden = true;
    this.status.replaceChildren();
  }

  connection(change: Pick<ConnectionChange, 'state'>): void {
    if (change.state === 'connected') this.hide();
    else if (change.state === 'connecting') this.show(this.strings.reconnecting);
    else this.show(this.strings.offline);
    this.panel.dataset.connection = change.state;
  }

  /** Names a fallback transport; WebSocket, the normal case, shows nothing. */
  transportIs(name: RealtimeTransport): void {
    this.panel.dataset.transport = name;
    this.transport.hidden = name === 'websocket';
    this.transport.textContent =
      name === 'http_stream'
        ? this.strings.transportHttpStream
        : name === 'sse'
          ? this.strings.transportSse
          : '';
  }
}
