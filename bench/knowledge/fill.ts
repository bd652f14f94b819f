// Fills one company's knowledge for the benches that run on a real service (answer.bench.ts, explain.ts): the help
// centre first, then the filler articles of scale.ts until the company holds the passages asked for.
import type { KnowledgeService } from '../../packages/server/src/knowledge/knowledge.service.ts';
import { type Article, readCorpus } from './data.ts';
import { scaleArticles } from './scale.ts';

/** Indexes the help centre, then filler until `companyId` holds at least `target` passages; answers how many. */
export async function fillCompany(
  knowledge: Pick<KnowledgeService, 'create'>,
  companyId: string,
  target: number,
): Promise<number> {
  let passages = 0;
  const add = async (article: Article) => {
    const { title, content, contentType } = article;
    const source = await knowledge.create(
      companyId,
      { kind: 'text', title, content, contentType },
      { actor: 'bench' },
    );
    passages += source.chunks;
  };
  for (const article of readCorpus()) await add(article);
  const filler = scaleArticles();
  while (passages < target) await add(filler.next().value!);
  return passages;
}
