import { randomUUID } from 'node:crypto';
import type { Company } from '../companies/companies.service.ts';
import { now } from '../storage/columns.ts';
import type { DigitalEmployeeSettings } from './digital-employees.settings.ts';

/**
 * The builtin digital employee every company starts with, so a fresh install chats out of the box. Its answers are
 * about Parley itself and point the operator at what to configure next.
 */
export const DEFAULT_DIGITAL_EMPLOYEE_NAME = 'Ava';

export const DEFAULT_SETTINGS: DigitalEmployeeSettings = {
  greeting: "Hi, I'm Ava 👋 How can I help you today?",
  answers: [
    {
      question: 'Who are you?',
      keywords: ['who are you', 'your name', 'are you a bot', 'are you human', 'robot'],
      answer:
        "I'm **Ava**, this site's built-in digital employee. I answer common questions, and a human agent can take over the conversation at any time.",
    },
    {
      question: 'Can I talk to a human?',
      keywords: ['human', 'agent', 'person', 'someone', 'operator', 'representative'],
      answer:
        "Of course. Leave your question here and a human agent will pick up this conversation; you'll see their reply right in this chat.",
    },
    {
      question: 'What is Parley?',
      keywords: ['parley', 'what is this', 'what can you do', 'help'],
      answer:
        'Parley is a self-hostable webchat service: visitors chat with a **digital employee** (a builtin bot, your own webhook or an OpenAI-compatible model), and human agents can take over at any time.',
    },
    {
      question: 'How do I connect my own bot or model?',
      keywords: ['bot', 'webhook', 'openai', 'llm', 'model', 'connect', 'configure', 'setup', 'set up'],
      answer:
        'Create a connector (`parley connectors create --type webhook|openai --url … --api-key …`), then a digital employee that uses it (`parley digital-employees create --responder webhook|openai --connector <id> --default`).',
    },
    {
      question: 'Is my data safe?',
      keywords: ['privacy', 'data', 'secure', 'security', 'gdpr', 'safe'],
      answer:
        'Parley is self-hosted, so conversations stay on servers the site owner runs. Connector API keys are encrypted at rest and are never shown again after they are set.',
    },
    {
      question: 'Hello',
      keywords: ['hello', 'hi', 'hey', 'good morning', 'good afternoon', 'good evening'],
      answer: 'Hello! Ask me anything, or type **human** to reach a person.',
    },
    {
      question: 'Thank you',
      keywords: ['thanks', 'thank you', 'thx', 'cheers'],
      answer: "You're welcome! Is there anything else I can help you with?",
    },
  ],
  fallback:
    "I'm not sure I understood that. I can tell you what Parley is, how to connect your own bot, or get a human agent for you — just ask.",
};

export function defaultDigitalEmployeeFor(company: Company) {
  const timestamp = now();
  return {
    id: randomUUID(),
    companyId: company.id,
    name: DEFAULT_DIGITAL_EMPLOYEE_NAME,
    responder: 'builtin' as const,
    connectorId: null,
    model: null,
    systemPrompt: null,
    settings: structuredClone(DEFAULT_SETTINGS),
    createdAt: timestamp,
    updatedAt: timestamp,
  };
}
