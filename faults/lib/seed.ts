// The data a fault run needs: a company (made with the CLI, `parley companies create`, in-process against the
// private cluster) and its default digital employee, a builtin bot whose answers the figures can rely on:
//   - "probe tagNN" → exactly "ack tagNN" (the answers-again probe matches its reply by that text);
//   - "story"       → a long reply streamed word by word (several seconds: a node can be killed mid-stream);
//   - anything else → a short fallback.
// The CLI's `digital-employees create` takes no builtin settings (answers, word delay), so that one record is
// created through the same service the CLI calls.
import { runCli } from '../../packages/server/src/cli/main.ts';
import { loadConfig } from '../../packages/server/src/config/load.ts';
import { createContext } from '../../packages/server/src/context.ts';
import { createLogger } from '../../packages/server/src/logging/logger.ts';

export const PROBE_TAGS = Array.from({ length: 40 }, (_, i) => `tag${String(i).padStart(2, '0')}`);
export const probeAnswer = (tag: string) => `ack ${tag}`;
export const FALLBACK = 'Thanks, noted.';

/** Pause between streamed words: every reply streams (typing → partials → complete), short ones stay short. */
export const WORD_DELAY_MS = 60;
/** Words of the long "story" reply: STORY_WORDS × WORD_DELAY_MS ≈ 7 s of streaming. */
export const STORY_WORDS = 120;
export const storyText = () => Array.from({ length: STORY_WORDS }, (_, i) => `word${i + 1}`).join(' ');

export interface Seeded {
  companyId: string;
  digitalEmployeeId: string;
}

/** Runs a `parley … --json` command in this process against `env` and returns its JSON result. */
async function parley(env: Record<string, string>, args: string[]): Promise<Record<string, string>> {
  const out: string[] = [];
  const code = await runCli([...args, '--json'], (line) => out.push(line), { env });
  if (code !== 0) throw new Error(`parley ${args.slice(0, 2).join(' ')} failed: ${out.at(-1) ?? ''}`);
  return JSON.parse(out.at(-1)!);
}

/** Creates the company and its digital employee in the database `env` points at (migrating it first). */
export async function seed(env: Record<string, string>): Promise<Seeded> {
  const company = await parley(env, ['companies', 'create', '--name', 'Fault Suite']);
  const ctx = await createContext(loadConfig(env), createLogger('warn', process.stderr));
  try {
    const employee = await ctx.digitalEmployees.create({
      companyId: company.id!,
      name: 'Steady',
      responder: 'builtin',
      settings: {
        greeting: null,
        word_delay_ms: WORD_DELAY_MS,
        fallback: FALLBACK,
        answers: [
          ...PROBE_TAGS.map((tag) => ({
            question: `Probe ${tag}`,
            keywords: [tag],
            answer: probeAnswer(tag),
          })),
          { question: 'A long story', keywords: ['story'], answer: storyText() },
        ],
      },
      isDefault: true,
    });
    return { companyId: company.id!, digitalEmployeeId: employee.id };
  } finally {
    await ctx.close();
  }
}
