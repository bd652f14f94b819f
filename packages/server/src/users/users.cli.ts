import { type Command, requireString } from '../cli/command.ts';

const create: Command<{ id: string; email: string; role: string }> = {
  name: 'users create',
  summary: 'create a portal user (the first admin of a company is created this way)',
  options: {
    company: { description: 'company id', required: true },
    email: { description: 'sign-in email', required: true },
    password: { description: 'password (at least 12 characters)', required: true, secret: true },
    role: { description: 'admin (everything) or agent (inbox only)', required: true },
  },
  async run(options, ctx) {
    const user = await ctx!.users.create({
      companyId: requireString(options, 'company'),
      email: requireString(options, 'email'),
      password: String(options.password),
      role: requireString(options, 'role'),
    });
    await ctx!.audit.record({
      type: 'portal_user.created',
      companyId: user.companyId,
      actor: 'cli',
      subject: user.id,
      details: { email: user.email, role: user.role },
    });
    return { id: user.id, email: user.email, role: user.role };
  },
  format: (r) => `created ${r.role} ${r.email}\nid: ${r.id}`,
};

export const userCommands = [create];
