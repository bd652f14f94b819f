import {
  type ChatMessage,
  type ConnectionState,
  type Conversation,
  type OfferedChoice,
  Webchat,
  WebchatError,
  type WebchatOptions,
} from '@parley/webchat-sdk';
import { useCallback, useEffect, useRef, useState } from 'react';

/** What {@link useParleyChat} gives a component: the chat's state to render, and what the visitor can do. */
export interface ParleyChat {
  /** All messages of the open conversation, in order (a streamed reply grows in place). */
  messages: readonly ChatMessage[];
  /** `connecting`, `connected` (messages flow both ways) or `disconnected`. */
  state: ConnectionState;
  /** Someone (the digital employee, an agent) is typing. */
  typing: boolean;
  /** Replies the visitor has not read yet (see `markRead`). */
  unreadCount: number;
  conversation: Conversation | null;
  /** Why the chat could not start (the SDK keeps retrying connections by itself once started). */
  error: WebchatError | null;
  /** Sends a message; it shows at once as `pending`. Rejects with `not_started` before the chat has started. */
  send(text: string): Promise<ChatMessage>;
  /** Answers a quick reply or card button of the open offer. */
  sendPostback(choice: OfferedChoice): Promise<ChatMessage>;
  /** Sends a failed message again. */
  retry(key: string): Promise<ChatMessage>;
  /** Marks everything shown as read. */
  markRead(): Promise<void>;
  /** The SDK client for everything else (uploads, ratings, earlier conversations); `null` until mounted. */
  chat: Webchat | null;
}

interface View {
  messages: readonly ChatMessage[];
  state: ConnectionState;
  typing: boolean;
  unreadCount: number;
  conversation: Conversation | null;
  error: WebchatError | null;
}

const INITIAL: View = {
  messages: [],
  state: 'connecting',
  typing: false,
  unreadCount: 0,
  conversation: null,
  error: null,
};

const notStarted = () => Promise.reject(new WebchatError('not_started', 'the chat has not started yet'));

/**
 * A Parley webchat in a React component: starts the SDK client when the component mounts (again when `baseUrl`,
 * `companyId`, `channelId` or `visitorToken` change) and closes it on unmount; re-renders on every change of the
 * conversation. The other options are read when the client starts.
 *
 * @example
 * ```tsx
 * function Chat() {
 *   const { messages, state, send } = useParleyChat({ baseUrl: 'https://chat.example.com', companyId: 'COMPANY_ID' });
 *   return (
 *     <>
 *       {messages.map((m) => <p key={m.key}>{m.role}: {m.text}</p>)}
 *       <button disabled={state !== 'connected'} onClick={() => void send('Hello!')}>Say hello</button>
 *     </>
 *   );
 * }
 * ```
 */
export function useParleyChat(options: WebchatOptions): ParleyChat {
  const [view, setView] = useState<View>(INITIAL);
  const [chat, setChat] = useState<Webchat | null>(null);
  const latest = useRef(options);
  latest.current = options;
  const { baseUrl, companyId, channelId, visitorToken } = options;

  useEffect(() => {
    const client = new Webchat({ ...latest.current, baseUrl, companyId, channelId, visitorToken });
    const update = (change: Partial<View>) => setView((current) => ({ ...current, ...change }));
    setView(INITIAL);
    setChat(client);
    const off = [
      client.on('messages', (messages) => update({ messages })),
      client.on('connection', ({ state }) => update({ state })),
      client.on('typing', ({ typing }) => update({ typing })),
      client.on('unread', ({ count }) => update({ unreadCount: count })),
      client.on('conversation', (conversation) => update({ conversation })),
      client.on('conversation:updated', (conversation) => update({ conversation })),
    ];
    client.start().then(
      () => update({ state: client.state, conversation: client.conversation, error: null }),
      (err: unknown) => {
        // Unmounted meanwhile: closing made start() reject, which is no error of the visitor's.
        if (!(err instanceof WebchatError && err.code === 'closed'))
          update({
            error: err instanceof WebchatError ? err : new WebchatError('start_failed', String(err)),
          });
      },
    );
    return () => {
      for (const stop of off) stop();
      client.close();
    };
  }, [baseUrl, companyId, channelId, visitorToken]);

  const send = useCallback((text: string) => (chat ? chat.send(text) : notStarted()), [chat]);
  const sendPostback = useCallback(
    (choice: OfferedChoice) => (chat ? chat.sendPostback(choice) : notStarted()),
    [chat],
  );
  const retry = useCallback((key: string) => (chat ? chat.retry(key) : notStarted()), [chat]);
  const markRead = useCallback(() => (chat ? chat.markRead() : Promise.resolve()), [chat]);
  return { ...view, send, sendPostback, retry, markRead, chat };
}
