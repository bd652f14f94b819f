import { isDeepStrictEqual } from 'node:util';
import type { Kysely } from 'kysely';

/**
 * The default digital employee speaks for the company it serves instead of about Parley
 * (digital-employees/default-digital-employee.ts). Existing companies keep what they have, except a builtin employee
 * whose settings are still, to the letter, the old default every company was created with: it gets the new default
 * for its company's name. Both texts are frozen here as they were at this migration. `down` gives the old text back to
 * the rows that still hold exactly this migration's text.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations must not depend on the evolving Database type.
export async function up(db: Kysely<any>): Promise<void> {
  await replaceSettings(db, (settings, company) =>
    isDeepStrictEqual(settings, OLD_DEFAULT) ? neutralDefault(company) : undefined,
  );
}

// biome-ignore lint/suspicious/noExplicitAny: see up().
export async function down(db: Kysely<any>): Promise<void> {
  await replaceSettings(db, (settings, company) =>
    isDeepStrictEqual(settings, neutralDefault(company)) ? OLD_DEFAULT : undefined,
  );
}

/** Rewrites the settings of each builtin digital employee for which `replacement` gives new ones. */
async function replaceSettings(
  // biome-ignore lint/suspicious/noExplicitAny: see up().
  db: Kysely<any>,
  replacement: (settings: unknown, company: string) => object | undefined,
): Promise<void> {
  const rows: Array<{ id: string; settings: string; company: string }> = await db
    .selectFrom('digital_employees as d')
    .innerJoin('companies as c', 'c.id', 'd.company_id')
    .select(['d.id', 'd.settings', 'c.name as company'])
    .where('d.responder', '=', 'builtin')
    .execute();
  for (const row of rows) {
    let settings: unknown;
    try {
      settings = JSON.parse(row.settings);
    } catch {
      continue;
    }
    const next = replacement(settings, row.company);
    if (next === undefined) continue;
    await db
      .updateTable('digital_employees')
      .set({ settings: JSON.stringify(next) })
      .where('id', '=', row.id)
      .execute();
  }
}

/** The default every company's "Ava" had before this migration (about Parley itself). */
export const OLD_DEFAULT = {
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

/** The default as of this migration, for a company called `company`. */
function neutralDefault(company: string): object {
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
