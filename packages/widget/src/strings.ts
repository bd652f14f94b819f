/**
 * Every text the widget shows or announces, in one object so a site can translate it:
 * `mountWidget({ …, strings: { send: 'Senden', … } })`.
 */
export const defaultStrings = {
  title: 'Chat with us',
  openChat: 'Open chat',
  closeChat: 'Close chat',
  inputLabel: 'Your message',
  inputPlaceholder: 'Write a message…',
  send: 'Send',
  you: 'You',
  assistant: 'Assistant',
  agent: 'Agent',
  system: 'Notice',
  typing: 'is typing…',
  someoneTyping: 'Typing…',
  sending: 'Sending…',
  notSent: 'Not sent.',
  retry: 'Retry',
  connecting: 'Connecting…',
  reconnecting: 'Reconnecting… your messages will be sent when the connection is back.',
  offline: 'Connection lost. Trying again…',
  startFailed: 'The chat could not start.',
  tryAgain: 'Try again',
  conversations: 'Earlier conversations',
  backToChat: 'Back to chat',
  newConversation: 'New conversation',
  noConversations: 'No earlier conversations.',
  loadOlder: 'Show earlier messages',
  conversationFrom: 'Conversation from',
  replyAnnouncement: 'New reply from',
  messageLog: 'Messages',
} as const;

export type WidgetStrings = { [K in keyof typeof defaultStrings]: string };
