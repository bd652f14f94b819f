/** The two stores Parley runs on (storage/database.ts). */
export type Dialect = 'sqlite' | 'postgres';
