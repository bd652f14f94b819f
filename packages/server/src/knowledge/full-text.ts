import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../storage/database.ts';
import type { Database } from '../storage/schema.ts';
import { type Combine, fts5Query, type QueryTerm, tsQuery } from './ranking.ts';
import type { LookedUp } from './vocabulary.ts';

/**
 * Candidates from the store's own full-text engine (docs/knowledge.md "Ranking", step 1), cheap at any index size
 * because the engine only ever ranks a short list of matches.
 *
 * Every term first (AND): when that already fills the pool, the passages that hold the whole question are the only
 * ones rescoring could rank first, and the far longer OR match is never run. Otherwise any of the question's rare
 * terms (OR) fills it up — common terms (packages/server/src/knowledge/vocabulary.ts) would match thousands of
 * passages and only count when rescoring. A question of common words alone is a conjunction, as in Lucene's
 * common-terms query: the passages holding all of them, and the OR of them all only when no passage does (ranking
 * the thousands of passages any one of them matches cost most of such a search's time at 10,000 passages).
 */
export interface CandidateRow {
  id: string;
  source_id: string;
  title: string;
  body: string;
  url: string | null;
  /** The engine's rank, higher is better. */
  rank: number;
}

export async function fullTextCandidates(
  db: Kysely<Database>,
  dialect: Dialect,
  companyId: string,
  question: Pick<LookedUp, 'terms' | 'rare'>,
  pool: number,
): Promise<CandidateRow[]> {
  const { terms, rare } = question;
  const wide = terms.length === 1 ? undefined : rare.length > 0 ? rare : terms;
  const enough = rare.length > 0 ? pool : 1;
  if (dialect === 'postgres') return postgresEveryThenAny(db, companyId, terms, wide, pool, enough);
  const all = await sqlite(db, companyId, terms, 'all', pool);
  if (all.length >= enough || wide === undefined) return all;
  const found = new Set(all.map((c) => c.id));
  const any = await sqlite(db, companyId, wide, 'any', pool);
  return [...all, ...any.filter((c) => !found.has(c.id))];
}

type Engine = (
  db: Kysely<Database>,
  companyId: string,
  terms: readonly QueryTerm[],
  combine: Combine,
  pool: number,
) => Promise<CandidateRow[]>;

/**
 * FTS5 (porter stemming, migration 100). bm25() weights (FTS5 §4.5.1.2): a word in the heading path counts four
 * times one in the text. FTS5 ranks and cuts its matches before any join (joining thousands of matches to filter
 * them by company costs more than ranking them), keeping WIDEN × pool. Other companies' passages may fill that cut:
 * when the company's own passages then fall short of the pool while the cut was full, the search is repeated with
 * the company filter applied to every match, so a company never loses a candidate to another.
 */
const sqlite: Engine = async (db, companyId, terms, combine, pool) => {
  const match = fts5Query(terms, combine);
  const cut = pool * SQLITE_WIDEN;
  const { rows } = await sql<CandidateRow & { ready: string | null }>`
    select c.id, c.source_id, c.title, c.body, s.url, s.id as ready, -m.r as rank
    from (
      select rowid, bm25(knowledge_search, 4.0, 1.0) as r from knowledge_search
      where knowledge_search match ${match} order by r limit ${cut}
    ) m
    left join knowledge_chunks c on c.rowid = m.rowid and c.company_id = ${companyId}
    left join knowledge_sources s on s.id = c.source_id and s.status = 'ready'
    order by m.r`.execute(db);
  const own = rows.filter((r) => r.ready !== null).slice(0, pool);
  if (own.length >= pool || rows.length < cut) return own.map(({ ready: _, ...row }) => row);
  const { rows: filtered } = await sql<CandidateRow>`
    select c.id, c.source_id, c.title, c.body, s.url, -bm25(knowledge_search, 4.0, 1.0) as rank
    from knowledge_search
    join knowledge_chunks c on c.rowid = knowledge_search.rowid
    join knowledge_sources s on s.id = c.source_id
    where knowledge_search match ${match} and c.company_id = ${companyId} and s.status = 'ready'
    order by bm25(knowledge_search, 4.0, 1.0)
    limit ${pool}`.execute(db);
  return filtered;
};

/** How many of the engine's best matches SQLite keeps per candidate wanted, before the company filter. */
const SQLITE_WIDEN = 4;

/**
 * PostgreSQL: the GIN index on the stored `search` vector finds the matches (migration 100, written directly since
 * packages/server/src/storage/migrations/300_knowledge_search_index_direct.ts); ts_rank with normalization 1 (divided
 * by 1 + log(length), so long passages do not win by size alone) orders them, with default weights an A (heading) hit
 * counting 2.5× a B (text) hit. Only the best `pool` ids of each match are ranked out, so the passages' text is read
 * for those alone.
 *
 * Both matches of fullTextCandidates are one statement: each statement is a trip through the pool and an event-loop
 * turn, which cost more than the AND match itself once the index has no pending list. The OR match sits behind a
 * condition on the AND match's count that PostgreSQL evaluates once, before scanning (a one-time filter): when the
 * passages holding every word are enough it is never run. Rows come back AND match first, each part
 * best first, the OR match without the passages the AND match already holds — what SQLite's two statements return.
 */
async function postgresEveryThenAny(
  db: Kysely<Database>,
  companyId: string,
  terms: readonly QueryTerm[],
  wide: readonly QueryTerm[] | undefined,
  pool: number,
  enough: number,
): Promise<CandidateRow[]> {
  const ranked = (query: string) => sql`
    select c.id, c.source_id, ts_rank(c.search, q, 1) as rank
    from knowledge_chunks c, to_tsquery('english', ${query}) q
    where c.company_id = ${companyId} and c.search @@ q`;
  const ready = sql`join knowledge_sources s on s.id = m.source_id and s.status = 'ready'`;
  const anyPart =
    wide === undefined
      ? sql``
      : sql`
    union all
    select m.id, m.source_id, s.url, m.rank, 1 as part from (
      ${ranked(tsQuery(wide, 'any'))} and (select count(*) from every_ready) < ${enough}
      order by rank desc limit ${pool}
    ) m ${ready}
    where m.id not in (select id from every_ready)`;
  const { rows } = await sql<CandidateRow>`
    with every_ready as (
      select m.id, m.source_id, s.url, m.rank from (
        ${ranked(tsQuery(terms, 'all'))} order by rank desc limit ${pool}
      ) m ${ready}
    ), found as (
      select id, source_id, url, rank, 0 as part from every_ready
      ${anyPart}
    )
    select c.id, c.source_id, c.title, c.body, f.url, f.rank
    from found f join knowledge_chunks c on c.id = f.id
    order by f.part, f.rank desc`.execute(db);
  return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
}
