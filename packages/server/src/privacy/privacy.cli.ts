import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type Command, requireString, UsageError } from '../cli-kit/command.ts';
import type { CompaniesService } from '../companies/companies.service.ts';
import type { ErasureReceipt, PrivacySelector, PrivacyService } from './privacy.service.ts';

/** What these commands use; the CLI (cli/main.ts) hands it over from the services it built. */
export interface PrivacyCommandDeps {
  companies: Pick<CompaniesService, 'get'>;
  privacy: Pick<PrivacyService, 'erase' | 'settled' | 'exportJson'>;
  /**
   * Connects the broker, so erasure disconnects live sessions on every node
   * (packages/server/src/webchat/webchat-services.ts `start`).
   */
  connectBroker(): Promise<void>;
}

const SELECTOR_OPTIONS = {
  company: { description: 'company id', required: true },
  'visitor-sub': { description: "the integrator's user id (the visitor token's sub)" },
  'conversation-id': { description: 'one conversation' },
  'session-id': { description: 'a visitor session (X-Session-Id)' },
};

/** Exactly one of the selector flags, as the platform API's body (docs/privacy.md "Selectors"). */
function selectorOf(options: Record<string, string | boolean | undefined>): PrivacySelector {
  const given = (['visitor-sub', 'conversation-id', 'session-id'] as const).filter(
    (name) => options[name] !== undefined,
  );
  if (given.length !== 1) {
    throw new UsageError('give exactly one of --visitor-sub, --conversation-id, --session-id');
  }
  const name = given[0]!;
  const value = requireString(options, name);
  return { [name.replace('-', '_')]: value } as PrivacySelector;
}

const erase: Command<ErasureReceipt, PrivacyCommandDeps> = {
  name: 'privacy erase',
  summary: "erase a visitor's conversations, messages, files, feedback, webhook data and realtime history",
  options: SELECTOR_OPTIONS,
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    // The broker is connected so that live sessions are disconnected and realtime history removed on every node
    // (with REDIS_URL; a single-node memory broker lives in the server process and expires history within 1 h).
    await ctx.connectBroker();
    const receipt = await ctx.privacy.erase(companyId, selectorOf(options), { actor: 'cli' });
    await ctx.privacy.settled(); // the history's second removal, before the process exits
    return receipt;
  },
  format: (r) =>
    [
      `erasure ${r.id} at ${r.erased_at}`,
      ...Object.entries(r.erased).map(([kind, count]) => `  ${kind}: ${count}`),
    ].join('\n'),
};

const exportCommand: Command<unknown, PrivacyCommandDeps> = {
  name: 'privacy export',
  summary: "export a visitor's conversations, messages and files as one JSON document",
  options: {
    ...SELECTOR_OPTIONS,
    out: { description: 'write the document to this file (streamed) instead of printing it' },
  },
  async run(options, ctx) {
    const companyId = requireString(options, 'company');
    await ctx.companies.get(companyId);
    const parts = await ctx.privacy.exportJson(companyId, selectorOf(options));
    if (typeof options.out === 'string') {
      await pipeline(Readable.from(parts), createWriteStream(options.out, { mode: 0o600 }));
      return { file: options.out };
    }
    let text = '';
    for await (const part of parts) text += part;
    return JSON.parse(text);
  },
  format: (r) => JSON.stringify(r, null, 2),
};

export const privacyCommands = [erase, exportCommand];
