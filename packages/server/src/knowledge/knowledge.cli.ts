import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { KnowledgeSynonymsAnswer } from '@parley/wire-types';
import { type Command, requireString } from '../cli-kit/command.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import { InvalidKnowledgeSourceError, InvalidKnowledgeSynonymsError } from './knowledge.errors.ts';
import type { CompanySynonyms, KnowledgeService, KnowledgeSource, SourceInput } from './knowledge.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface KnowledgeCommandDeps {
  knowledge: KnowledgeService;
  companies: Pick<CompaniesService, 'get'>;
}

const CLI_ACTOR = { actor: 'cli' };

/** The source as `POST /platform/v1/knowledge/sources` answers it (knowledge.schemas.ts `sourceView`). */
const viewOf = async (source: KnowledgeSource) => (await import('./knowledge.schemas.ts')).sourceView(source);
type SourceView = Awaited<ReturnType<typeof viewOf>>;

const add: Command<SourceView, KnowledgeCommandDeps> = {
  name: 'knowledge add',
  summary:
    'add a knowledge source from a file (PDF, markdown, HTML, text) or a web page (fetched); prints the source',
  options: {
    company: { description: 'company id', required: true },
    file: { description: 'file to add (.pdf, .md, .html, .txt)' },
    url: {
      description:
        'http(s) page to fetch (through the outbound policy); with --file, the link shown with citations',
    },
    title: { description: 'title (default: the document’s own title or the file name)' },
  },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    const file = typeof options.file === 'string' ? options.file : undefined;
    const url = typeof options.url === 'string' ? options.url : undefined;
    const title = typeof options.title === 'string' ? options.title : undefined;
    let input: SourceInput;
    if (file) {
      input = {
        kind: 'file',
        bytes: await readFile(file),
        fileName: basename(file),
        ...(title !== undefined ? { title } : {}),
        ...(url !== undefined ? { url } : {}),
      };
    } else if (url) {
      input = { kind: 'fetch', url, ...(title !== undefined ? { title } : {}) };
    } else {
      throw new InvalidKnowledgeSourceError('--file or --url', 'is required');
    }
    return viewOf(await ctx.knowledge.create(companyId, input, CLI_ACTOR));
  },
  format: (r) =>
    [
      `added knowledge source ${r.id}`,
      `title:  ${r.title}`,
      `status: ${r.status}${r.error ? ` (${r.error})` : ''}`,
      `chunks: ${r.chunks}`,
    ].join('\n'),
};

const list: Command<{ sources: SourceView[] }, KnowledgeCommandDeps> = {
  name: 'knowledge list',
  summary: "list a company's knowledge sources",
  options: { company: { description: 'company id', required: true } },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    const sources = await ctx.knowledge.list(companyId);
    return { sources: await Promise.all(sources.map(viewOf)) };
  },
  format: (r) =>
    r.sources
      .map((s) => `${s.id}  ${s.status.padEnd(8)}  ${String(s.chunks).padStart(4)} chunks  ${s.title}`)
      .join('\n') || '(no knowledge sources)',
};

interface SearchView {
  results: Array<{ source_id: string; title: string; url?: string; snippet: string; score: number }>;
}

const search: Command<SearchView, KnowledgeCommandDeps> = {
  name: 'knowledge search',
  summary: "search a company's knowledge as the digital employees do; prints ranked passages",
  options: {
    company: { description: 'company id', required: true },
    query: { description: 'the question or words to look for', required: true },
    limit: { description: 'results wanted, 1–20 (default 5)' },
  },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    const limit = typeof options.limit === 'string' ? Number(options.limit) : 5;
    if (!Number.isInteger(limit) || limit < 1 || limit > 20)
      throw new InvalidKnowledgeSourceError('--limit', 'must be a whole number from 1 to 20');
    const { searchResultView } = await import('./knowledge.schemas.ts');
    const passages = await ctx.knowledge.search(companyId, requireString(options, 'query'), { limit });
    return { results: passages.map(searchResultView) };
  },
  format: (r) =>
    r.results.map((p) => `${p.score.toFixed(3)}  ${p.title}\n       ${p.snippet}`).join('\n') ||
    '(nothing found)',
};

const remove: Command<{ id: string; deleted: true }, KnowledgeCommandDeps> = {
  name: 'knowledge delete',
  summary: 'delete a knowledge source; its passages are never found or cited again',
  options: {
    company: { description: 'company id', required: true },
    'source-id': { description: 'knowledge source id', required: true },
  },
  async run(options, ctx) {
    const id = requireString(options, 'source-id');
    await ctx.knowledge.delete(requireString(options, 'company'), id, CLI_ACTOR);
    return { id, deleted: true };
  },
  format: (r) => `deleted knowledge source ${r.id}`,
};

type SynonymsView = KnowledgeSynonymsAnswer;

/** The list as the platform route answers it (the schemas load lazily, like `viewOf` above). */
const synonymsViewOf = async (list: CompanySynonyms) =>
  (await import('./knowledge.schemas.ts')).synonymsView(list);

const formatSynonyms = (r: SynonymsView) =>
  r.synonyms.map((g) => g.terms.join(' = ')).join('\n') || '(no company synonyms)';

const synonyms: Command<SynonymsView, KnowledgeCommandDeps> = {
  name: 'knowledge synonyms',
  summary: 'print a company\'s knowledge synonyms (docs/knowledge.md "Company synonyms"), one group a line',
  options: { company: { description: 'company id', required: true } },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    return synonymsViewOf(await ctx.knowledge.synonyms(companyId));
  },
  format: formatSynonyms,
};

const setSynonyms: Command<SynonymsView, KnowledgeCommandDeps> = {
  name: 'knowledge synonyms set',
  summary:
    'replace a company\'s knowledge synonyms with a JSON file {"synonyms":[{"terms":[…]}]} (the body of PUT ' +
    '/platform/v1/knowledge/synonyms; [] removes them); prints the list',
  options: {
    company: { description: 'company id', required: true },
    file: { description: 'JSON file {"synonyms":[{"terms":["…","…"]}]}', required: true },
  },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    let body: unknown;
    try {
      body = JSON.parse(await readFile(requireString(options, 'file'), 'utf8'));
    } catch {
      throw new InvalidKnowledgeSynonymsError('--file', 'must be a readable JSON file');
    }
    return synonymsViewOf(await ctx.knowledge.setSynonyms(companyId, body, CLI_ACTOR));
  },
  format: formatSynonyms,
};

export const knowledgeCommands = [add, list, search, remove, synonyms, setSynonyms];
