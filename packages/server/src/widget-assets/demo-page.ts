import type { DemoSetup } from './demo-company.ts';

/** Whose widget the demo page shows: the Demo company's channel, or a company asked for with `?company=`. */
export type DemoTarget = { companyId: string; channelId?: string; asked?: 'found' | 'unknown' };

/**
 * The demo page: a plain host page with the one-line embed, as an integrator would write it. The ids are UUIDs
 * (a company that exists, or the server's own demo ids), and are checked again here before they go into attributes.
 */
export function demoPage(target: DemoTarget | DemoSetup, publicUrl: string): string {
  const companyId = uuidOnly(target.companyId);
  const channelAttr = target.channelId ? ` data-channel="${uuidOnly(target.channelId)}"` : '';
  const asked = 'asked' in target ? target.asked : undefined;
  const about =
    asked === 'found'
      ? `<p>This page embeds the Parley widget for company <code>${companyId}</code>, with its default digital
employee. Conversations started here appear in that company's inbox in the portal
(<a href="/portal/inbox">/portal/inbox</a>).</p>`
      : `${asked === 'unknown' ? '<p><strong>There is no company with that id</strong>; this is the Demo company instead.</p>\n' : ''}<p>This page embeds the Parley widget for the <strong>Demo</strong> company. Open the chat in the bottom right
corner and say hello to Ava, the builtin digital employee. To chat with your own company instead, open
<code>/demo?company=&lt;company id&gt;</code>.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<title>Parley webchat demo</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>
  body { font-family: system-ui, sans-serif; max-width: 720px; margin: 48px auto; padding: 0 20px; color: #1f2328; line-height: 1.5; }
  code, pre { background: #f1f3f5; border-radius: 6px; }
  code { padding: 1px 5px; } pre { padding: 12px; overflow-x: auto; }
</style>
</head>
<body>
<h1>Parley webchat demo</h1>
${about}
<p>To embed it on your own site, add one line (and list your site's origin on the company or channel):</p>
<pre><code>&lt;script src="${escapeHtml(publicUrl)}/widget.js" data-company="${companyId}"${channelAttr} async&gt;&lt;/script&gt;</code></pre>
<p>Theme it with CSS variables such as <code>--parley-accent</code> on <code>:root</code>.</p>
<script src="/widget.js" data-company="${companyId}"${channelAttr}></script>
</body>
</html>
`;
}

function uuidOnly(value: string): string {
  if (!/^[0-9a-f-]{36}$/i.test(value)) throw new Error('demo ids must be UUIDs');
  return value;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
