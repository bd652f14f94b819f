/**
 * The page at `/`: what this server is and where to go from here — the webchat demo, the portal and the API
 * reference — for the person who opens the address `npm start` printed. Static HTML without any script, styled by the
 * portal's stylesheet (packages/portal/src/styles.css, `.landing`), so it looks like the rest of Parley.
 */
export const LANDING_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley</title>
<meta name="description" content="Parley: machine-to-machine API access, connector key rotation and realtime webchat.">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="/portal/assets/app.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="bar"><span class="brand">Parley</span></div></header>
<main id="main" class="landing">
<h1>Parley is running</h1>
<p class="lead">Machine-to-machine API access with OAuth 2.0 client credentials, write-only rotation of connector
API keys, and realtime webchat where visitors talk to a digital employee and to your agents.</p>
<ul class="landing-links">
<li><h2><a href="/demo">Webchat demo</a></h2>
<p class="summary">Open the chat widget on a sample page and talk to the builtin digital employee.</p></li>
<li><h2><a href="/portal">Portal</a></h2>
<p class="summary">Sign in as a company admin or agent: settings, API clients, channels, and the live inbox.</p></li>
<li><h2><a href="/docs">API reference</a></h2>
<p class="summary">The OpenAPI 3.1 reference of the platform, integrations and webchat APIs.</p></li>
</ul>
<h2>First steps</h2>
<p>Create a company and its first admin on the command line, then sign in to the portal:</p>
<pre class="snippet"><code>npx parley companies create --name "Acme"
npx parley users create --company &lt;company id&gt; --email you@example.com \\
  --name "Your name" --password '&lt;12 characters or more&gt;' --role admin</code></pre>
<p class="hint"><code>npx parley --help</code> lists every command; <code>npx parley &lt;command&gt; --help</code> explains one.</p>
</main>
</body>
</html>
`;
