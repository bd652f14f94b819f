/**
 * The second part of the widget, loaded by the launcher when the visitor opens the chat or a message waits for them:
 * the SDK (with the realtime client), markdown and the views. Parley serves it as `/widget/chat.<hash>.js`, an ES
 * module cached for a year (its name changes with its content).
 */
import { createWebchat } from '@parley/webchat-sdk';
import { ChatPanelView } from './chat-panel.ts';
import type { ChatPanel, PanelHost } from './options.ts';

export function mountPanel(host: PanelHost): ChatPanel {
  return new ChatPanelView(host);
}

export { createWebchat };
