/**
 * The chat panel's stylesheet, loaded with the chat (launcher-styles.ts has the variables and the launcher). Logical
 * properties throughout, so right-to-left languages mirror the layout; full screen under 480 px wide with the
 * device's safe areas and the visual viewport (viewport.ts), so the on-screen keyboard never covers the composer;
 * no motion for visitors who ask for less.
 */
export const chatCss = `
.panel {
  position: absolute; inset-inline-end: 0; bottom: 70px; width: min(380px, calc(100vw - 40px));
  height: min(620px, calc(100vh - 110px)); background: var(--bg); border-radius: var(--radius);
  box-shadow: 0 10px 40px rgba(0,0,0,.25); display: flex; flex-direction: column; overflow: hidden;
  animation: parley-open .18s ease-out;
}
@keyframes parley-open { from { opacity: 0; transform: translateY(10px); } to { opacity: 1; transform: none; } }
header { background: var(--accent); color: var(--accent-text); padding: 10px 12px; display: flex; align-items: center; gap: 6px; }
header h2 { font-size: 16px; margin: 0; flex: 1; overflow-wrap: anywhere; }
header button {
  background: transparent; border: 1px solid transparent; color: inherit; border-radius: 8px; min-width: 36px;
  min-height: 36px; padding: 4px 8px; font-size: 16px;
}
header button:hover { border-color: currentColor; }
header :focus-visible { outline-color: var(--accent-text); outline-offset: -3px; }
.status { font-size: 13px; padding: 6px 14px; background: #fff3bf; color: #5c4400; }
.status button { margin-inline-start: 6px; background: none; border: none; color: inherit; text-decoration: underline; padding: 0; }
.transport { font-size: 12px; padding: 4px 14px; background: #f1f3f5; color: #454d55; }
.log { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 8px; overscroll-behavior: contain; }
.older { align-self: center; background: none; border: none; color: var(--accent-ink); text-decoration: underline; }
.msg { max-width: 85%; padding: 8px 12px; border-radius: var(--radius); background: var(--surface); overflow-wrap: anywhere; align-self: flex-start; }
.msg.user { align-self: flex-end; background: var(--accent); color: var(--accent-text); }
.msg.system { align-self: center; max-width: 95%; background: transparent; color: var(--muted); font-size: 13px; text-align: center; padding: 2px 8px; }
.msg .author { display: block; font-size: 12px; color: var(--muted); margin-bottom: 2px; }
.msg .body p { margin: 0 0 6px; } .msg .body p:last-child { margin-bottom: 0; }
.msg .body ul, .msg .body ol { margin: 4px 0; padding-inline-start: 20px; }
.msg .body h1, .msg .body h2, .msg .body h3 { font-size: 1em; margin: 4px 0; }
.msg .body pre { background: rgba(0,0,0,.06); padding: 6px; border-radius: 6px; overflow-x: auto; margin: 4px 0; direction: ltr; text-align: left; }
.msg .body code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; }
.msg a { color: inherit; }
.msg .meta { display: flex; flex-wrap: wrap; gap: 4px 8px; align-items: baseline; font-size: 12px; margin-top: 3px; color: var(--muted); }
.msg.user .meta { justify-content: flex-end; color: inherit; }
.msg.system .meta { justify-content: center; }
.msg.failed { outline: 2px solid #c92a2a; outline-offset: 1px; }
.msg .meta button { background: none; border: none; color: inherit; text-decoration: underline; padding: 0; font-size: 12px; }
.msg .error { color: #b42318; font-size: 13px; }
.msg .status { font-size: 13px; font-style: italic; opacity: .8; margin-top: 4px; }
.msg.user .error { color: inherit; }
.unread-separator { display: flex; align-items: center; gap: 8px; color: #b42318; font-size: 12px; font-weight: 600; }
.unread-separator::before, .unread-separator::after { content: ""; flex: 1; border-top: 1px solid currentColor; }
.typing { align-self: flex-start; background: var(--surface); border-radius: var(--radius); padding: 8px 12px; }
.typing .author { font-size: 12px; color: var(--muted); margin-inline-end: 6px; }
.dots { display: inline-flex; gap: 3px; }
.dots span { width: 6px; height: 6px; border-radius: 50%; background: var(--muted); animation: parley-blink 1.2s infinite; }
.dots span:nth-child(2) { animation-delay: .2s; } .dots span:nth-child(3) { animation-delay: .4s; }
@keyframes parley-blink { 0%, 80%, 100% { opacity: .3; } 40% { opacity: 1; } }
form.composer { display: flex; gap: 8px; padding: 10px; border-top: 1px solid var(--surface); align-items: flex-end; }
form .attach { background: none; border: none; color: var(--muted); padding: 0 4px; min-height: 40px; }
form .attach svg { width: 22px; height: 22px; fill: currentColor; }
.tray { display: flex; flex-wrap: wrap; gap: 6px; padding: 6px 10px 0; }
.tray .upload { display: flex; align-items: center; gap: 6px; background: var(--surface); border-radius: 8px; padding: 4px 8px; font-size: 13px; max-width: 100%; }
.tray .upload.failed { color: #b42318; }
.tray progress { width: 80px; }
.tray .remove { background: none; border: none; color: inherit; padding: 0 2px; }
.panel.dragging { outline: 3px dashed var(--accent-ink); outline-offset: -6px; }
.attachments { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 4px; }
.attachments .thumbnail { display: block; max-width: 180px; max-height: 140px; border-radius: 8px; }
.chip { display: inline-flex; align-items: center; gap: 4px; color: inherit; background: rgba(0,0,0,.06); border-radius: 8px; padding: 4px 8px; font-size: 13px; text-decoration: none; }
.chip svg { width: 16px; height: 16px; fill: currentColor; flex: none; }
textarea {
  flex: 1; resize: none; font: inherit; padding: 8px 10px; border-radius: 10px; border: 1px solid var(--border);
  min-height: 40px; max-height: 120px; color: var(--text); background: var(--bg);
}
textarea::placeholder { color: var(--muted); opacity: 1; }
form.composer .send { background: var(--accent); color: var(--accent-text); border: none; border-radius: 10px; padding: 0 14px; min-height: 40px; }
.conversations { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 6px; }
.conversations button { text-align: start; padding: 10px; border-radius: 10px; border: 1px solid var(--border); background: var(--bg); color: var(--text); }
.conversations button[aria-current="true"] { border-color: var(--accent-ink); border-width: 2px; }
.conversations p { color: var(--muted); margin: 0; }
.feedback { display: flex; align-items: center; flex-wrap: wrap; gap: 4px; margin-top: 4px; }
.feedback .thumb { background: none; border: 1px solid transparent; border-radius: 8px; padding: 3px 5px; color: var(--muted); display: inline-grid; place-items: center; min-width: 28px; min-height: 28px; }
.feedback .thumb svg { width: 15px; height: 15px; fill: currentColor; }
.feedback .thumb:hover { color: var(--text); border-color: var(--border); }
.feedback .thumb[aria-pressed="true"] { color: var(--accent-ink); border-color: var(--accent-ink); background: var(--bg); }
.feedback-comment { display: flex; gap: 4px; padding: 0; border: none; flex-basis: 100%; }
.feedback-comment input { flex: 1; font: inherit; font-size: 13px; padding: 2px 6px; border-radius: 6px; border: 1px solid var(--border); min-width: 0; color: var(--text); background: var(--bg); }
.feedback-comment input::placeholder { color: var(--muted); opacity: 1; }
.feedback-comment button { font-size: 13px; padding: 0 8px; border-radius: 6px; border: 1px solid var(--accent-ink); background: var(--bg); color: var(--accent-ink); }
.feedback .thanks { font-size: 12px; color: var(--muted); }
.handoff { display: flex; flex-direction: column; align-items: center; gap: 4px; padding: 4px 12px; }
.handoff-button { background: var(--bg); border: 1px solid var(--accent-ink); color: var(--accent-ink); border-radius: 14px; padding: 4px 12px; }
.handoff-note { font-size: 13px; color: #b42318; margin: 0; text-align: center; }
.handoff-note:empty { display: none; }
.closed-note { font-size: 13px; color: var(--muted); text-align: center; margin: 0; padding: 6px 12px; }
.csat { display: block; padding: 10px 14px; border-top: 1px solid var(--surface); }
.csat fieldset { border: none; margin: 0; padding: 0; }
.csat legend { font-weight: 600; margin-bottom: 6px; padding: 0; }
.csat .scores { display: flex; gap: 6px; }
.csat .scores input { position: absolute; opacity: 0; width: 1px; height: 1px; }
.csat .scores label { width: 40px; height: 36px; display: grid; place-items: center; border-radius: 8px; border: 1px solid var(--border); cursor: pointer; }
.csat .scores input:checked + label { background: var(--accent); color: var(--accent-text); border-color: var(--accent); }
.csat .scores input:focus-visible + label { outline: 3px solid var(--accent-ink); outline-offset: 2px; }
.csat textarea { display: block; width: 100%; margin: 4px 0 8px; }
.csat-comment-label { display: block; font-size: 13px; margin-top: 8px; }
.csat button { background: var(--accent); color: var(--accent-text); border: none; border-radius: 10px; padding: 6px 14px; }
.csat-error { color: #b42318; font-size: 13px; margin: 6px 0 0; }
.csat-thanks { margin: 0; }
.quick-replies { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 8px; }
.choice, .card-link {
  font: inherit; font-size: 14px; padding: 6px 12px; border-radius: 16px; border: 1px solid var(--accent-ink);
  background: var(--bg); color: var(--accent-ink); cursor: pointer; text-decoration: none; display: inline-block;
}
.choice:hover:not(:disabled), .card-link:hover { background: var(--accent); color: var(--accent-text); border-color: var(--accent); }
.choice:disabled { opacity: 0.55; cursor: default; }
.sources { margin-top: 8px; font-size: 0.85em; }
.sources-title { margin: 0 0 2px; font-weight: 600; color: var(--muted, inherit); }
.sources ol { margin: 0; padding-inline-start: 1.4em; }
.sources a { color: inherit; text-decoration: underline; overflow-wrap: anywhere; }
.card { margin-top: 8px; border: 1px solid var(--border); border-radius: 12px; overflow: hidden; background: var(--bg); max-width: 260px; }
.card img { display: block; width: 100%; max-height: 160px; object-fit: cover; }
.card-title { font-weight: 700; margin: 8px 10px 2px; }
.card-text { margin: 0 10px 6px; font-size: 14px; color: var(--muted); }
.card-buttons { display: flex; flex-wrap: wrap; gap: 6px; padding: 6px 10px 10px; }
@media (max-width: 479.98px) {
  .panel {
    position: fixed; inset: 0; top: var(--parley-vv-top, 0px); bottom: auto; width: 100%;
    height: var(--parley-vv-height, 100%); border-radius: 0; box-shadow: none;
  }
  header { padding-top: max(10px, env(safe-area-inset-top)); padding-inline: max(12px, env(safe-area-inset-left)) max(12px, env(safe-area-inset-right)); }
  .log, .conversations { padding-inline: max(12px, env(safe-area-inset-left)) max(12px, env(safe-area-inset-right)); }
  form.composer { padding-bottom: max(10px, env(safe-area-inset-bottom)); padding-inline: max(10px, env(safe-area-inset-left)) max(10px, env(safe-area-inset-right)); }
  /* 16px keeps mobile browsers from zooming into the composer when it gets the focus. */
  textarea { font-size: 16px; }
  .msg { max-width: 90%; }
}
`;
