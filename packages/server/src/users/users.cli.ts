import type { AuditLog } from '../audit/audit.service.ts';
import { type Command, requireString } from '../cli-kit/command.ts';
import type { UsersService } from './users.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface UserCommandDeps {
  users: UsersService;
  audit: Pick<AuditLog, 'record'>;
}

/** `{id, email, role}` (the external contract, docs/design.md "CLI"), and `name` when one was given. */
const create: Command<{ id: string; email: string; name?: string; role: string }, UserCommandDeps> = {
  name: 'users create',
  summary: 'create a portal user (the first admin of a company is created this way)',
  options: {
    company: { description: 'company id', required: true },
    email: { description: 'sign-in email', required: true },
    password: { description: 'password (at least 12 characters)', required: true, secret: true },
    role: { description: 'admin (everything) or agent (inbox only)', required: true },
    name: {
      description:
        'display name visitors see on their messages (default: the part of the email before the @)',
    },
  },
  async run(options, ctx) {
    const user = await ctx.users.create({
      companyId: requireString(options, 'company'),
      email: requireString(options, 'email'),
      password: String(options.password),
      role: requireString(options, 'role'),
      name: typeof options.name === 'string' ? options.name : null,
    });
    await ctx.audit.record({
      type: 'portal_user.created',
      companyId: user.companyId,
      actor: 'cli',
      subject: user.id,
      details: { email: user.email, name: user.name, role: user.role },
    });
    return {
      id: user.id,
      email: user.email,
      ...(user.name === null ? {} : { name: user.name }),
      role: user.role,
    };
  },
  format: (r) => `created ${r.role} ${r.email}${r.name === undefined ? '' : ` (${r.name})`}\nid: ${r.id}`,
};

export const userCommands = [create];
