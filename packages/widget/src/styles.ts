/**
 * The widget's stylesheet, scoped by its Shadow DOM. Themable from the host page through CSS custom properties,
 * which inherit into the shadow tree, e.g. `:root { --parley-accent: #0a7d4f; }`.
 *
 * Variables: --parley-accent, --parley-accent-text, --parley-bg, --parley-surface, --parley-text, --parley-muted,
 * --parley-radius, --parley-font, --parley-z-index.
 */
export const widgetCss = `
:host { all: initial; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
.root {
  --accent: var(--parley-accent, #3b5bdb);
  --accent-text: var(--parley-accent-text, #ffffff);
  --bg: var(--parley-bg, #ffffff);
  --surface: var(--parley-surface, #f1f3f5);
  --text: var(--parley-text, #1f2328);
  --muted: var(--parley-muted, #59636e);
  --radius: var(--parley-radius, 14px);
  font-family: var(--parley-font, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
  font-size: 15px; line-height: 1.45; color: var(--text);
  position: fixed; right: 20px; bottom: 20px; z-index: var(--parley-z-index, 2147483000);
}
button { font: inherit; cursor: pointer; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.launcher {
  width: 56px; height: 56px; border-radius: 50%; border: none; background: var(--accent); color: var(--accent-text);
  box-shadow: 0 4px 14px rgba(0,0,0,.25); display: grid; place-items: center; margin-left: auto;
}
.launcher svg { width: 26px; height: 26px; fill: currentColor; }
.panel {
  position: absolute; right: 0; bottom: 70px; width: min(380px, calc(100vw - 40px)); height: min(600px, calc(100vh - 110px));
  background: var(--bg); border-radius: var(--radius); box-shadow: 0 10px 40px rgba(0,0,0,.25);
  display: flex; flex-direction: column; overflow: hidden;
}
.panel[hidden] { display: none; }
header { background: var(--accent); color: var(--accent-text); padding: 12px 14px; display: flex; align-items: center; gap: 8px; }
header h2 { font-size: 16px; margin: 0; flex: 1; }
header button { background: transparent; border: 1px solid transparent; color: inherit; border-radius: 8px; padding: 4px 8px; }
header button:hover { border-color: currentColor; }
.status { font-size: 13px; padding: 6px 14px; background: #fff3bf; color: #5c4400; }
.status[hidden] { display: none; }
.transport { font-size: 12px; padding: 4px 14px; background: #f1f3f5; color: #495057; }
.transport[hidden] { display: none; }
.status button { margin-left: 6px; }
.log { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 8px; }
.older { align-self: center; background: none; border: none; color: var(--accent); text-decoration: underline; }
.msg { max-width: 85%; padding: 8px 12px; border-radius: var(--radius); background: var(--surface); overflow-wrap: anywhere; }
.msg.user { align-self: flex-end; background: var(--accent); color: var(--accent-text); }
.msg.system { align-self: center; background: transparent; color: var(--muted); font-size: 13px; text-align: center; }
.msg .author { display: block; font-size: 12px; color: var(--muted); margin-bottom: 2px; }
.msg.user .author { display: none; }
.msg .body p { margin: 0 0 6px; } .msg .body p:last-child { margin-bottom: 0; }
.msg .body ul, .msg .body ol { margin: 4px 0; padding-left: 20px; }
.msg .body pre { background: rgba(0,0,0,.06); padding: 6px; border-radius: 6px; overflow-x: auto; margin: 4px 0; }
.msg .body code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; }
.msg a { color: inherit; }
.msg .meta { display: block; font-size: 12px; opacity: .85; margin-top: 2px; }
.msg.failed { outline: 2px solid #c92a2a; }
.msg .meta button { background: none; border: none; color: inherit; text-decoration: underline; padding: 0; }
.msg .error { color: #c92a2a; font-size: 13px; }
.msg.user .error { color: inherit; }
.dots { display: inline-flex; gap: 3px; }
.dots span { width: 6px; height: 6px; border-radius: 50%; background: var(--muted); animation: blink 1.2s infinite; }
.dots span:nth-child(2) { animation-delay: .2s; } .dots span:nth-child(3) { animation-delay: .4s; }
@keyframes blink { 0%, 80%, 100% { opacity: .3; } 40% { opacity: 1; } }
@media (prefers-reduced-motion: reduce) { .dots span { animation: none; } }
form { display: flex; gap: 8px; padding: 10px; border-top: 1px solid var(--surface); }
form .attach { background: none; color: var(--muted); padding: 0 4px; }
form .attach svg { width: 22px; height: 22px; fill: currentColor; }
.tray { display: flex; flex-wrap: wrap; gap: 6px; padding: 6px 10px 0; }
.tray .upload { display: flex; align-items: center; gap: 6px; background: var(--surface); border-radius: 8px; padding: 4px 8px; font-size: 13px; max-width: 100%; }
.tray .upload.failed { color: #b42318; }
.tray progress { width: 80px; }
.tray .remove { background: none; border: none; color: inherit; padding: 0 2px; }
.panel.dragging { outline: 3px dashed var(--accent); outline-offset: -6px; }
.attachments { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 4px; }
.attachments .thumbnail { display: block; max-width: 180px; max-height: 140px; border-radius: 8px; }
.chip { display: inline-flex; align-items: center; gap: 4px; color: inherit; background: rgba(0,0,0,.06); border-radius: 8px; padding: 4px 8px; font-size: 13px; text-decoration: none; }
.chip svg { width: 16px; height: 16px; fill: currentColor; flex: none; }
textarea { flex: 1; resize: none; font: inherit; padding: 8px 10px; border-radius: 10px; border: 1px solid #ced4da; min-height: 40px; max-height: 120px; color: var(--text); background: var(--bg); }
form button { background: var(--accent); color: var(--accent-text); border: none; border-radius: 10px; padding: 0 14px; }
.conversations { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 6px; }
.conversations[hidden] { display: none; }
.conversations button { text-align: left; padding: 10px; border-radius: 10px; border: 1px solid #dee2e6; background: var(--bg); color: var(--text); }
.conversations button[aria-current="true"] { border-color: var(--accent); }
.launcher { position: relative; }
.badge {
  position: absolute; top: -4px; right: -4px; min-width: 22px; height: 22px; padding: 0 6px; border-radius: 11px;
  background: #c92a2a; color: #fff; font-size: 12px; font-weight: 700; line-height: 22px; text-align: center;
  box-shadow: 0 0 0 2px var(--bg);
}
.feedback { display: flex; align-items: center; flex-wrap: wrap; gap: 4px; margin-top: 4px; }
.feedback .thumb { background: none; border: 1px solid transparent; border-radius: 8px; padding: 3px 5px; color: var(--muted); display: inline-grid; place-items: center; }
.feedback .thumb svg { width: 15px; height: 15px; fill: currentColor; }
.feedback .thumb:hover { color: var(--text); border-color: #ced4da; }
.feedback .thumb[aria-pressed="true"] { color: var(--accent); border-color: var(--accent); background: var(--bg); }
.feedback-comment { display: flex; gap: 4px; padding: 0; border: none; flex-basis: 100%; }
.feedback-comment input { flex: 1; font: inherit; font-size: 13px; padding: 2px 6px; border-radius: 6px; border: 1px solid #ced4da; min-width: 0; }
.feedback-comment button { font-size: 13px; padding: 0 8px; border-radius: 6px; }
.feedback .thanks { font-size: 12px; color: var(--muted); }
.msg .seen { text-align: right; }
.handoff { display: flex; flex-direction: column; align-items: center; gap: 4px; padding: 4px 12px; }
.handoff-button { background: none; border: 1px solid var(--accent); color: var(--accent); border-radius: 14px; padding: 4px 12px; cursor: pointer; }
.handoff-note { font-size: 13px; color: var(--muted); margin: 0; text-align: center; }
.handoff-note:empty { display: none; }
.closed-note { font-size: 13px; color: var(--muted); text-align: center; margin: 0; padding: 6px 12px; }
.csat { display: block; padding: 10px 14px; border-top: 1px solid var(--surface); }
.csat fieldset { border: none; margin: 0; padding: 0; }
.csat legend { font-weight: 600; margin-bottom: 6px; }
.csat .scores { display: flex; gap: 6px; }
.csat .scores input { position: absolute; opacity: 0; width: 1px; height: 1px; }
.csat .scores label { width: 40px; height: 36px; display: grid; place-items: center; border-radius: 8px; border: 1px solid #ced4da; cursor: pointer; }
.csat .scores input:checked + label { background: var(--accent); color: var(--accent-text); border-color: var(--accent); }
.csat .scores input:focus-visible + label { outline: 3px solid var(--accent); outline-offset: 2px; }
.csat textarea { display: block; width: 100%; margin: 4px 0 8px; }
.csat-comment-label { display: block; font-size: 13px; margin-top: 8px; }
.csat button { background: var(--accent); color: var(--accent-text); border: none; border-radius: 10px; padding: 6px 14px; }
.csat-error { color: #c92a2a; font-size: 13px; margin: 6px 0 0; }
.csat-thanks { margin: 0; }
.quick-replies { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 8px; }
.choice, .card-link {
  font: inherit; font-size: 14px; padding: 6px 12px; border-radius: 16px; border: 1px solid var(--accent);
  background: var(--bg); color: var(--accent); cursor: pointer; text-decoration: none; display: inline-block;
}
.choice:hover:not(:disabled), .card-link:hover { background: var(--accent); color: var(--accent-text); }
.choice:focus-visible, .card-link:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.choice:disabled { opacity: 0.55; cursor: default; }
.card { margin-top: 8px; border: 1px solid #dee2e6; border-radius: 12px; overflow: hidden; background: var(--bg); max-width: 260px; }
.card img { display: block; width: 100%; max-height: 160px; object-fit: cover; }
.card-title { font-weight: 700; margin: 8px 10px 2px; }
.card-text { margin: 0 10px 6px; font-size: 14px; color: var(--muted); }
.card-buttons { display: flex; flex-wrap: wrap; gap: 6px; padding: 6px 10px 10px; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0,0,0,0); white-space: nowrap; border: 0; }
`;
