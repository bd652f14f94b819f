import type { Page } from '@parley/wire-types';
import { Type } from '@sinclair/typebox';

/** `?limit=&offset=` of every portal list (strings: the server does not coerce query types). */
export const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
    offset: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$' })),
  },
  { additionalProperties: false },
);

const PAGE_SIZE_DEFAULT = 20;
const PAGE_SIZE_MAX = 100;

/** The page size a `?limit=` asks for: the default when absent or 0, at most PAGE_SIZE_MAX (every portal list). */
export const pageLimit = (limit: string | undefined): number =>
  Math.min(Math.max(Number(limit ?? PAGE_SIZE_DEFAULT) || PAGE_SIZE_DEFAULT, 1), PAGE_SIZE_MAX);

/**
 * One page of a company's list. The owning services return a company's whole list (settings lists are small:
 * clients, connectors, channels), so the page is cut here rather than in each service.
 */
export function pageOf<T>(all: T[], query: { limit?: string; offset?: string }): Page<T> {
  const limit = pageLimit(query.limit);
  const offset = Math.max(Number(query.offset ?? 0) || 0, 0);
  return { items: all.slice(offset, offset + limit), total: all.length, limit, offset };
}
