/** One page of a portal list, `?limit=&offset=` (packages/server/src/http/offset-page.ts cuts it). */
export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}
