/**
 * The whole database as Kysely sees it. Each capability declares its own tables next to its code and adds them to
 * this interface from its `*.tables.ts` (TypeScript declaration merging, types only: nothing runs), so the store
 * names no feature and every capability stays above it (docs/architecture.md "Layers"). Migrations in ./migrations
 * create the tables for SQLite and PostgreSQL alike; `npm run typecheck` compiles every `*.tables.ts`, so the type is
 * always whole.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging from each capability's *.tables.ts
export interface Database {}
