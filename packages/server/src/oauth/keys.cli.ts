import type { Command } from '../cli-kit/command.ts';
import type { OAuthServices } from './oauth.services.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface KeyCommandDeps {
  oauth: Pick<OAuthServices, 'keys'>;
}

const rotate: Command<{ kid: string; alg: string; previous_kid: string | null }, KeyCommandDeps> = {
  name: 'keys rotate',
  summary: 'rotate the token signing key (old public keys stay published until their tokens expired)',
  options: {},
  async run(_options, ctx) {
    const result = await ctx.oauth.keys.rotate('cli');
    return { kid: result.kid, alg: result.alg, previous_kid: result.previousKid };
  },
  format: (r) =>
    `new signing key ${r.kid} (${r.alg}) is active${r.previous_kid ? `; ${r.previous_kid} retired` : ''}\n` +
    'running servers pick it up at their next key reload (PARLEY_SIGNING_KEY_RELOAD_MS)',
};

const list: Command<
  {
    keys: Array<{
      kid: string;
      alg: string;
      status: string;
      created_at: string;
      retired_at: string | null;
      published: boolean;
    }>;
  },
  KeyCommandDeps
> = {
  name: 'keys list',
  summary: 'list token signing keys (public information only)',
  options: {},
  async run(_options, ctx) {
    const keys = await ctx.oauth.keys.list();
    return {
      keys: keys.map((k) => ({
        kid: k.kid,
        alg: k.alg,
        status: k.status,
        created_at: k.createdAt,
        retired_at: k.retiredAt,
        published: k.published,
      })),
    };
  },
  format: (r) =>
    r.keys
      .map((k) => `${k.kid}  ${k.alg}  ${k.status}${k.published ? '' : ' (unpublished)'}  ${k.created_at}`)
      .join('\n') || '(no signing keys yet: the server creates one at first start)',
};

export const keyCommands = [rotate, list];
