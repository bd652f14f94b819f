export type { KnowledgePassage, KnowledgeSearch } from './knowledge-search.ts';
