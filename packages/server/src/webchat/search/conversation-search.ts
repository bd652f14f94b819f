import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { KeysetPosition } from '../../http/keyset-cursor.ts';
import type { Dialect } from '../../storage/database.ts';
import { POSTGRES_DOCUMENT } from '../../storage/migrations/062_message_search.ts';
import type { Database } from '../../storage/schema.ts';
import { type Conversation, toConversation } from '../conversation.ts';

/** The message that made a conversation a hit: the latest one matching, with the text around the first term. */
export interface MessageMatch {
  message_id: string;
  role: string;
  excerpt: string;
  created_at: string;
}

/** At most this many words of a query are searched (the rest is ignored). */
const MAX_TERMS = 8;
const EXCERPT_CHARS = 140;

/** The words of a query as the full-text indexes see them: letters and digits, lower-cased. */
const termsOf = (query: string): string[] =>
  (query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_TERMS);

/**
 * Search over a company's conversations (docs/routing.md "Search"), one interface for both stores: a conversation
 * is a hit when its visitor's name, email or id, or its id, contains the query, or when one of its complete messages
 * holds every word of the query (each as a prefix, so results follow the agent's typing; a reply is found once it
 * completes). Message text is matched by the store's full-text index — PostgreSQL `tsvector` @@ `tsquery` on a
 * partial GIN index, SQLite FTS5 `MATCH` (migrations 062 and 063) — and nothing else differs between the two.
 */
export class ConversationSearch {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** Hits, most recently active first; `before` is the keyset position of the previous page's last hit. */
  async search(
    companyId: string,
    query: string,
    options: { limit: number; before?: KeysetPosition },
  ): Promise<Conversation[]> {
    const text = query.trim().replace(/^#/, '');
    const terms = termsOf(text);
    const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const contains = (column: string) =>
      sql<SqlBool>`${sql.ref(column)} ${sql.raw(this.dialect === 'postgres' ? 'ilike' : 'like')} ${pattern} escape '\\'`;
    const before = options.before;
    const rows = await this.db
      .selectFrom('conversations as c')
      .selectAll('c')
      .where('c.company_id', '=', companyId)
      .where((eb) =>
        eb.or([
          contains('c.visitor_name'),
          contains('c.visitor_email'),
          contains('c.visitor_id'),
          contains('c.id'),
          ...(terms.length > 0 ? [eb('c.id', 'in', this.conversationsWithText(terms, text))] : []),
        ]),
      )
      .$if(before !== undefined, (q) =>
        q.where((eb) =>
          eb.or([
            eb('c.updated_at', '<', before!.updatedAt),
            eb.and([eb('c.updated_at', '=', before!.updatedAt), eb('c.id', '<', before!.id)]),
          ]),
        ),
      )
      .orderBy('c.updated_at', 'desc')
      .orderBy('c.id', 'desc')
      .limit(options.limit)
      .execute();
    return rows.map(toConversation);
  }

  /** For each conversation that has one, its latest message holding every word of `query`. */
  async matchesIn(conversationIds: string[], query: string): Promise<Map<string, MessageMatch>> {
    const text = query.trim().replace(/^#/, '');
    const terms = termsOf(text);
    const found = new Map<string, MessageMatch>();
    if (terms.length === 0 || conversationIds.length === 0) return found;
    const rows = await this.db
      .selectFrom('messages')
      .select(['id', 'conversation_id', 'role', 'blocks', 'created_at'])
      .where('conversation_id', 'in', conversationIds)
      .where('id', 'in', this.messagesWithText(terms, text))
      .orderBy('position', 'desc')
      .limit(conversationIds.length * 20)
      .execute();
    for (const row of rows) {
      if (found.has(row.conversation_id)) continue;
      found.set(row.conversation_id, {
        message_id: row.id,
        role: row.role,
        excerpt: excerptOf(textOf(row.blocks), terms),
        created_at: row.created_at,
      });
    }
    return found;
  }

  private conversationsWithText(terms: string[], text: string): Expression<string> {
    if (this.dialect === 'postgres') {
      return sql<string>`(select conversation_id from messages where status = 'complete' and ${sql.raw(POSTGRES_DOCUMENT)} @@ ${postgresQuery(text)})`;
    }
    return sql<string>`(select conversation_id from message_search where message_search match ${ftsQuery(terms)})`;
  }

  private messagesWithText(terms: string[], text: string): Expression<string> {
    if (this.dialect === 'postgres') {
      return sql<string>`(select id from messages where status = 'complete' and ${sql.raw(POSTGRES_DOCUMENT)} @@ ${postgresQuery(text)})`;
    }
    return sql<string>`(select m.id from messages m where m.rowid in (select rowid from message_search where message_search match ${ftsQuery(terms)}))`;
  }
}

/**
 * `'word':* & 'other':*`: the query cut into lexemes by PostgreSQL's own parser, as the document was. The parser
 * reads text by its context (in `canary-3f2a-4abc` it finds `-4` and `abc`, a signed number and a word), so terms cut
 * apart by termsOf would miss the very text they were copied from. Lexemes are quoted (a quote doubled, a backslash
 * escaped) and cast to `tsquery`, whose input takes them as they are: `to_tsquery` would run the parser over each
 * once more and cut one that reads as a number with an exponent (`4e8b4f56` → `4e8 <-> b4f56`), which the document,
 * parsed in context, does not hold.
 */
const postgresQuery = (text: string) =>
  sql`(select string_agg('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''':*', ' & ')::tsquery from unnest(to_tsvector('simple', ${text})))`;

/** `"word"* "other"*` — FTS5 prefix queries, every term required. */
const ftsQuery = (terms: string[]): string => terms.map((t) => `"${t}"*`).join(' ');

function textOf(blocks: string): string {
  try {
    const parsed = JSON.parse(blocks) as Array<{ content?: unknown }>;
    return parsed
      .map((b) => (typeof b.content === 'string' ? b.content : ''))
      .filter(Boolean)
      .join(' ');
  } catch {
    return '';
  }
}

/** About EXCERPT_CHARS characters of `text` around the first term found (whole text when short). */
function excerptOf(text: string, terms: string[]): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= EXCERPT_CHARS) return flat;
  const lower = flat.toLowerCase();
  const positions = terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0);
  const at = positions.length > 0 ? Math.min(...positions) : 0;
  const start = Math.max(0, Math.min(at - 40, flat.length - EXCERPT_CHARS));
  const slice = flat.slice(start, start + EXCERPT_CHARS);
  return `${start > 0 ? '…' : ''}${slice}${start + EXCERPT_CHARS < flat.length ? '…' : ''}`;
}
