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
