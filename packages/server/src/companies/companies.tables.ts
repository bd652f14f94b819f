export interface CompaniesTable {
  id: string;
  name: string;
  /** JSON array of origins allowed to embed the webchat for this company (channels may narrow it). */
  allowed_origins: string;
  created_at: string;
}

export interface CompaniesTables {
  companies: CompaniesTable;
}

// This capability's tables join the one database type (storage/schema.ts) from here, so the store knows no feature.
declare module '../storage/schema.ts' {
  interface Database extends CompaniesTables {}
}
