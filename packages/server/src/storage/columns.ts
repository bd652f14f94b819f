/**
 * Column types shared by SQLite and PostgreSQL so one migration set serves both: ids are text (UUIDs or prefixed
 * ids), timestamps are ISO-8601 UTC text (sortable, portable), JSON is text, booleans are 0/1 integers.
 */
export const ID = 'text';
export const TIMESTAMP = 'text';
export const JSON_TEXT = 'text';
export const BOOL = 'integer';

export const now = (): string => new Date().toISOString();
export const toBool = (v: number | boolean | null | undefined): boolean => v === 1 || v === true;
