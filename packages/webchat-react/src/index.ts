/**
 * @parley/webchat-react — Parley webchat in React: `useParleyChat(options)` runs an `@parley/webchat-sdk` client for
 * the lifetime of a component and re-renders it as the conversation changes.
 */
export { type ParleyChat, useParleyChat } from './use-parley-chat.ts';
