import { randomUUID } from 'node:crypto';
import type { Company } from '../companies/companies.service.ts';
import { now } from '../storage/columns.ts';
import type { DigitalEmployeeSettings } from './digital-employees.settings.ts';

/**
 * The builtin digital employee every company starts with, so a fresh install chats out of the box. It speaks for
 * the company it serves — its name is in the greeting and the answers — says what it can do (answer common
 * questions, bring in a person from the team), and never talks about the software it runs on: visitors of a shop
 * want the shop, not Parley. Companies replace its answers with their own in the portal.
 */
export const DEFAULT_DIGITAL_EMPLOYEE_NAME = 'Ava';

/**
 * The default builtin settings for a company called `company`. The name goes in as the operator wrote it (it is theirs,
 * like the answers they may write instead): not escaped, since the widget's markdown subset shows a backslash escape
 * literally, and "Acme Inc." must not read "Acme Inc\.".
 */
export function defaultSettingsFor(company: string): DigitalEmployeeSettings {
  return {
    greeting: `Hi, I'm Ava, ${company}'s digital assistant 👋 I can answer common questions and connect you with someone from the ${company} team. How can I help?`,
    answers: [
      {
        question: 'Who are you?',
        keywords: ['who are you', 'your name', 'are you a bot', 'are you human', 'robot'],
        answer: `I'm **Ava**, ${company}'s digital assistant. I answer common questions here, and someone from the ${company} team can take over this conversation at any time.`,
      },
      {
        question: 'Can I talk to a human?',
        keywords: ['human', 'agent', 'person', 'someone', 'operator', 'representative'],
        answer: `Of course. Leave your question here and someone from the ${company} team will pick up this conversation; you'll see their reply right in this chat.`,
      },
      {
        question: 'What can you do?',
        keywords: ['what can you do', 'what is this', 'how does this work', 'help'],
        answer: `I can answer common questions about ${company}, and bring in a person from the team whenever you like: type your question, or **human** to reach a person.`,
      },
      {
        question: 'What happens to my messages?',
        keywords: ['privacy', 'data', 'secure', 'security', 'gdpr', 'safe'],
        answer: `This chat is run by ${company}: your messages are kept so that the team can answer you, and ${company}'s privacy policy says how your data is handled.`,
      },
      {
        question: 'Hello',
        keywords: ['hello', 'hi', 'hey', 'good morning', 'good afternoon', 'good evening'],
        answer: `Hello! How can I help you today? Type **human** at any time to reach someone from the ${company} team.`,
      },
      {
        question: 'Thank you',
        keywords: ['thanks', 'thank you', 'thx', 'cheers'],
        answer: "You're welcome! Is there anything else I can help you with?",
      },
    ],
    fallback: `I'm not sure I understood that. I can answer common questions about ${company}, or get someone from the team for you: just type **human**.`,
  };
}

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
    settings: defaultSettingsFor(company.name),
    createdAt: timestamp,
    updatedAt: timestamp,
  };
}
