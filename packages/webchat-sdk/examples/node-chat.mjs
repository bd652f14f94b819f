// Chats with a Parley company from Node 20: one message, the digital employee's streamed reply, then bye.
//
//   npm install @parley/webchat-sdk ws
//   PARLEY_URL=https://chat.example.com PARLEY_COMPANY=<company id> node node-chat.mjs "What are your hours?"
//
// Node 20 has no global WebSocket: the `ws` package gives one (Node 22 and browsers need nothing).
import { createWebchat, memoryStorage } from '@parley/webchat-sdk';
import WebSocket from 'ws';

const question = process.argv[2] ?? 'Hello!';
const chat = await createWebchat({
  baseUrl: process.env.PARLEY_URL,
  companyId: process.env.PARLEY_COMPANY,
  channelId: process.env.PARLEY_CHANNEL || undefined,
  websocket: WebSocket,
  storage: memoryStorage(),
});
// Resolves with the first reply that completes after our message.
const reply = new Promise((resolve) => {
  chat.on('message:completed', (message) => {
    if (message.role !== 'user' && chat.messages.some((m) => m.role === 'user')) resolve(message);
  });
});
const sent = await chat.send(question);
console.log(JSON.stringify({ sent: sent.text, status: sent.status }));
const answer = await reply;
console.log(JSON.stringify({ reply: answer.text, from: answer.author?.name ?? answer.role }));
chat.close();
