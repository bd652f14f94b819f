import type { AuditLog } from '../audit/audit.service.ts';
import { type Command, requireString } from '../cli-kit/command.ts';
import type { CompaniesService, Company } from './companies.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface CompanyCommandDeps {
  companies: CompaniesService;
  audit: Pick<AuditLog, 'record'>;
}

const create: Command<{ id: string; name: string }, CompanyCommandDeps> = {
  name: 'companies create',
  summary: 'create a company (tenant) and its default digital employee',
  options: { name: { description: 'display name', required: true } },
  async run(options, ctx) {
    const company = await ctx.companies.create(requireString(options, 'name'));
    await ctx.audit.record({
      type: 'company.created',
      companyId: company.id,
      actor: 'cli',
      subject: company.id,
    });
    return { id: company.id, name: company.name };
  },
  format: (r) => `created company ${r.name}\nid: ${r.id}`,
};

const list: Command<
  { companies: Array<{ id: string; name: string; created_at: string }> },
  CompanyCommandDeps
> = {
  name: 'companies list',
  summary: 'list companies',
  options: {},
  async run(_options, ctx) {
    const companies = await ctx.companies.list();
    return {
      companies: companies.map((c: Company) => ({ id: c.id, name: c.name, created_at: c.createdAt })),
    };
  },
  format: (r) => r.companies.map((c) => `${c.id}  ${c.name}`).join('\n') || '(no companies)',
};

export const companyCommands = [create, list];
