import { Type } from '@sinclair/typebox';

/** `?limit=&offset=` of every portal list (strings: the server does not coerce query types). */
export const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$' })),
    offset: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$' })),
  },
  { additionalProperties: false },
);

export const PAGE_SIZE_DEFAULT = 20;
export const PAGE_SIZE_MAX = 100;

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

/**
 * One page of a company's list. The owning services return a company's whole list (settings lists are small:
 * clients, connectors, channels), so the page is cut here rather than in each service.
 */
export function pageOf<T>(all: T[], query: { limit?: string; offset?: string }): Page<T> {
  const limit = Math.min(
    Math.max(Number(query.limit ?? PAGE_SIZE_DEFAULT) || PAGE_SIZE_DEFAULT, 1),
    PAGE_SIZE_MAX,
  );
  const offset = Math.max(Number(query.offset ?? 0) || 0, 0);
  return { items: all.slice(offset, offset + limit), total: all.length, limit, offset };
}
