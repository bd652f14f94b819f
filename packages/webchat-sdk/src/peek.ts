import { VisitorIdentity } from './identity.ts';
import type { WebchatOptions } from './options.ts';
import { RestClient } from './rest-client.ts';

/**
 * The unread count of the conversation a {@link Webchat} with these options would resume, over one REST call and
 * without the realtime client: a launcher badge before the chat is opened (the widget's first script loads nothing
 * more). 0 when there is none to resume.
 *
 * @example
 * ```ts
 * badge.textContent = String(await peekUnread({ baseUrl, companyId, channelId }));
 * ```
 */
export function peekUnread(options: WebchatOptions): Promise<number> {
  const identity = new VisitorIdentity(options);
  const rest = new RestClient({
    baseUrl: options.baseUrl,
    companyId: options.companyId,
    channelId: options.channelId,
    sessionId: identity.sessionId,
    fetch: options.fetch,
    visitorTokens: identity.tokens,
  });
  return identity.peekUnread(rest);
}
