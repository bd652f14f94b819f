import { mountLauncher } from './launcher.ts';
import type { WidgetHandle, WidgetOptions } from './options.ts';

export type { WidgetHandle, WidgetOptions } from './options.ts';

/**
 * Adds the launcher button and, when the visitor opens it, the chat panel to the page, inside a Shadow DOM so neither
 * side's styles leak. The chat starts on first open; a returning visitor gets their conversation back (the SDK
 * persists the session). A bundler splits the chat (chat.ts) into a chunk of its own, loaded then.
 *
 * @example
 * ```ts
 * import { mountWidget } from '@parley/widget';
 * mountWidget({ baseUrl: 'https://chat.example.com', companyId: '…', channelId: '…', lang: 'de' });
 * ```
 */
export function mountWidget(options: WidgetOptions): WidgetHandle {
  return mountLauncher(options, { loadChat: () => import('./chat.ts') });
}
