import type {
  KnowledgeChunkList,
  KnowledgeSearchAnswer,
  KnowledgeSourceList,
  KnowledgeSourceView,
  KnowledgeSynonymsAnswer,
} from '@parley/wire-types';
import { api } from '../api.ts';
import { createForm } from '../components/form.ts';
import { confirmDelete, pageIntro, rowButton, statusArea, titledSection } from '../components/page-parts.ts';
import { formatTime, h, replaceChildren } from '../dom.ts';

/** Only http(s) links are rendered as links (a source's URL is shown to visitors the same way). */
const webUrl = (url: string | null | undefined) => (url && /^https?:\/\//i.test(url) ? url : null);

/**
 * Settings → Knowledge (docs/knowledge.md): the articles the digital employees answer from. Add one as text or as a
 * page to fetch, edit (re-index) or delete it, see its passages as indexed, and search as the employees do.
 */
export async function renderKnowledge(main: HTMLElement): Promise<void> {
  const status = statusArea();
  const { say } = status;
  const listSlot = h('div', { class: 'knowledge-sources' });
  const detailSlot = h('div', { class: 'knowledge-detail' });
  const resultsSlot = h('div', { class: 'knowledge-results', 'aria-live': 'polite' });
  let editing: KnowledgeSourceView | undefined;

  const reload = async () => {
    const { sources } = await api<KnowledgeSourceList>('GET', '/knowledge/sources');
    if (sources.length === 0) {
      replaceChildren(listSlot, h('p', {}, 'No knowledge yet.'));
      return;
    }
    const rows = sources.map((s) =>
      h(
        'tr',
        {},
        h(
          'td',
          {},
          webUrl(s.url)
            ? h('a', { href: webUrl(s.url)!, target: '_blank', rel: 'noopener noreferrer' }, s.title)
            : s.title,
        ),
        h('td', {}, s.content_type),
        h('td', {}, s.status === 'failed' ? `failed: ${s.error ?? ''}` : s.status),
        h('td', {}, String(s.chunks)),
        h('td', {}, formatTime(s.updated_at)),
        h(
          'td',
          {},
          h(
            'div',
            { class: 'actions' },
            rowButton('Passages', `Passages of ${s.title}`, () => showChunks(s)),
            rowButton('Edit', `Edit ${s.title}`, () => edit(s)),
            rowButton('Delete', `Delete ${s.title}`, () => remove(s), 'danger'),
          ),
        ),
      ),
    );
    replaceChildren(
      listSlot,
      h(
        'table',
        {},
        h('caption', { class: 'visually-hidden' }, 'Knowledge sources'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Title', 'Type', 'Status', 'Passages', 'Updated', 'Actions'].map((t) =>
              h('th', { scope: 'col' }, t),
            ),
          ),
        ),
        h('tbody', {}, ...rows),
      ),
    );
  };

  const showChunks = async (s: KnowledgeSourceView) => {
    const { chunks } = await api<KnowledgeChunkList>('GET', `/knowledge/sources/${s.id}/chunks`);
    replaceChildren(
      detailSlot,
      titledSection(
        'knowledge-chunks',
        `Passages of ${s.title}`,
        chunks.length === 0
          ? h('p', {}, 'Nothing indexed.')
          : h(
              'ol',
              { class: 'chunks' },
              ...chunks.map((c) =>
                h('li', {}, h('strong', {}, c.title), h('pre', { class: 'chunk' }, c.body)),
              ),
            ),
      ),
    );
  };

  const remove = (s: KnowledgeSourceView): Promise<void> =>
    confirmDelete({
      title: `Delete “${s.title}”?`,
      consequence:
        'Its passages are removed at once: the digital employees no longer answer from it or cite it.',
      confirmLabel: 'Delete source',
      path: `/knowledge/sources/${s.id}`,
      deleted: `Deleted “${s.title}”.`,
      status,
      reload: async () => {
        replaceChildren(detailSlot);
        await reload();
      },
    });

  const form = createForm({
    submitLabel: 'Save source',
    resetOnSuccess: true,
    codeFields: { invalid_knowledge_source: 'content' },
    fields: [
      { name: 'title', label: 'Title', maxLength: 200, placeholder: 'Returns and refunds' },
      {
        name: 'content_type',
        label: 'Format',
        type: 'select',
        options: [
          { value: 'text/markdown', label: 'Markdown' },
          { value: 'text/html', label: 'HTML' },
          { value: 'text/plain', label: 'Plain text' },
          { value: 'fetch', label: 'Fetch the page at the URL' },
        ],
      },
      { name: 'url', label: 'URL (optional; required to fetch)', type: 'url', maxLength: 2048 },
      { name: 'content', label: 'Content', type: 'textarea' },
    ],
    onSubmit: async (values) => {
      const type = String(values.content_type || 'text/markdown');
      const url = String(values.url ?? '').trim();
      const title = String(values.title ?? '').trim();
      const body =
        type === 'fetch'
          ? { url, fetch: true, ...(title ? { title } : {}) }
          : { title, content: String(values.content ?? ''), content_type: type, ...(url ? { url } : {}) };
      const target = editing;
      const saved = target
        ? await api<KnowledgeSourceView>('PUT', `/knowledge/sources/${target.id}`, body)
        : await api<KnowledgeSourceView>('POST', '/knowledge/sources', body);
      editing = undefined;
      say(
        saved.status === 'failed' ? 'error' : 'success',
        saved.status === 'failed'
          ? `“${saved.title}” could not be indexed: ${saved.error ?? ''}`
          : `“${saved.title}” is indexed: ${saved.chunks} passages.`,
      );
      await reload();
    },
  });

  const edit = (s: KnowledgeSourceView) => {
    editing = s;
    const set = (name: string, value: string) => {
      const field = form.el.querySelector<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(
        `[name="${name}"]`,
      );
      if (field) field.value = value;
    };
    set('title', s.title);
    set('url', s.url ?? '');
    set('content_type', s.content_type === 'application/pdf' ? 'text/plain' : s.content_type);
    say('info', `Editing “${s.title}”: saving replaces its content and indexes it again.`);
    form.el.querySelector<HTMLElement>('[name="content"]')?.focus();
  };

  const searchForm = createForm({
    submitLabel: 'Search',
    fields: [{ name: 'q', label: 'Question', required: true, maxLength: 1000 }],
    onSubmit: async (values) => {
      const { results } = await api<KnowledgeSearchAnswer>(
        'GET',
        `/knowledge/search?q=${encodeURIComponent(String(values.q))}`,
      );
      replaceChildren(
        resultsSlot,
        results.length === 0
          ? h('p', {}, 'Nothing found.')
          : h(
              'ol',
              { class: 'search-results' },
              ...results.map((r) =>
                h('li', {}, h('strong', {}, r.title), ` (${r.score.toFixed(2)})`, h('p', {}, r.snippet)),
              ),
            ),
      );
    },
  });

  // The company's synonyms (docs/knowledge.md "Company synonyms"): one group a line, its terms separated by commas.
  const synonymsForm = createForm({
    submitLabel: 'Save synonyms',
    codeFields: { invalid_knowledge_synonyms: 'synonyms' },
    fields: [
      {
        name: 'synonyms',
        label: 'Synonyms (one group a line, terms separated by commas)',
        type: 'textarea',
        placeholder: 'cash on delivery, pay on arrival',
      },
    ],
    onSubmit: async (values) => {
      const groups = String(values.synonyms ?? '')
        .split('\n')
        .map((line) =>
          line
            .split(',')
            .map((t) => t.trim())
            .filter((t) => t !== ''),
        )
        .filter((terms) => terms.length > 0)
        .map((terms) => ({ terms }));
      const saved = await api<KnowledgeSynonymsAnswer>('PUT', '/knowledge/synonyms', { synonyms: groups });
      showSynonyms(saved);
      const n = saved.synonyms.length;
      say('success', n === 0 ? 'Synonyms removed.' : `Synonyms saved: ${n} ${n === 1 ? 'group' : 'groups'}.`);
    },
  });
  const showSynonyms = (answer: KnowledgeSynonymsAnswer) => {
    const field = synonymsForm.el.querySelector<HTMLTextAreaElement>('[name="synonyms"]');
    if (field) field.value = answer.synonyms.map((g) => g.terms.join(', ')).join('\n');
  };

  main.append(
    ...pageIntro(
      'Knowledge',
      'The articles your digital employees answer from. Answers cite them; when nothing here answers a question, the employee says so and offers a person.',
    ),
    status.el,
    titledSection('knowledge-list', 'Sources', listSlot),
    detailSlot,
    titledSection('knowledge-add', 'Add or edit a source', form.el),
    titledSection('knowledge-search', 'Search', searchForm.el, resultsSlot),
    titledSection(
      'knowledge-synonyms',
      'Synonyms',
      h(
        'p',
        {},
        'Words or phrases your customers and your articles use for the same thing. ' +
          'A question holding one term of a group is also searched by the others.',
      ),
      synonymsForm.el,
    ),
  );
  await reload();
  showSynonyms(await api<KnowledgeSynonymsAnswer>('GET', '/knowledge/synonyms'));
}
