/**
 * The launcher's stylesheet (it ships in /widget.js; the chat's is chat-styles.ts), scoped by the Shadow DOM. Themable
 * from the host page through CSS custom properties, which inherit into the shadow tree, e.g.
 * `:root { --parley-accent: #0a7d4f; }`.
 *
 * Variables: --parley-accent, --parley-accent-text, --parley-bg, --parley-surface, --parley-text, --parley-muted,
 * --parley-radius, --parley-font, --parley-z-index. `--accent-text` and `--accent-ink` (the accent where it is text
 * on the background) are recomputed from the accent for contrast (theme.ts).
 *
 * Positions use logical properties (`inset-inline-end`, …), so a right-to-left language mirrors the layout.
 */
export const launcherCss = `
:host { all: initial; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
.root {
  --accent: var(--parley-accent, #3b5bdb);
  --accent-text: var(--parley-accent-text, #ffffff);
  --accent-ink: var(--accent);
  --bg: var(--parley-bg, #ffffff);
  --surface: var(--parley-surface, #f1f3f5);
  --text: var(--parley-text, #1f2328);
  --muted: var(--parley-muted, #59636e);
  --border: #8a939c;
  --radius: var(--parley-radius, 14px);
  font-family: var(--parley-font, system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans Arabic", "Noto Sans Hebrew", sans-serif);
  font-size: 15px; line-height: 1.45; color: var(--text); text-align: start;
  position: fixed; z-index: var(--parley-z-index, 2147483000);
  bottom: max(20px, calc(env(safe-area-inset-bottom) + 8px));
  inset-inline-end: max(20px, calc(env(safe-area-inset-right) + 8px));
}
.root[dir="rtl"] { inset-inline-end: max(20px, calc(env(safe-area-inset-left) + 8px)); }
button { font: inherit; cursor: pointer; }
:focus-visible { outline: 3px solid var(--accent-ink); outline-offset: 2px; }
.launcher {
  position: relative; width: 56px; height: 56px; border-radius: 50%; border: none; background: var(--accent);
  color: var(--accent-text); box-shadow: 0 4px 14px rgba(0,0,0,.25); display: grid; place-items: center;
  margin-inline-start: auto; transition: transform .15s ease-out;
}
.launcher:hover { transform: scale(1.05); }
.launcher[aria-busy="true"] svg { opacity: .6; }
.launcher svg { width: 26px; height: 26px; fill: currentColor; }
.badge {
  position: absolute; top: -4px; inset-inline-end: -4px; min-width: 22px; height: 22px; padding: 0 6px;
  border-radius: 11px; background: #c92a2a; color: #fff; font-size: 12px; font-weight: 700; line-height: 22px;
  text-align: center; box-shadow: 0 0 0 2px var(--bg);
}
.load-error {
  position: absolute; bottom: 66px; inset-inline-end: 0; width: max-content; max-width: min(300px, calc(100vw - 40px));
  background: var(--bg); color: var(--text); border-radius: 10px; padding: 8px 12px; font-size: 14px;
  box-shadow: 0 4px 14px rgba(0,0,0,.2);
}
.sr-only {
  position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0,0,0,0);
  white-space: nowrap; border: 0;
}
@media (max-width: 479.98px) { .root[data-open="true"] .launcher { display: none; } }
@media (prefers-reduced-motion: reduce) { * { animation: none !important; transition: none !important; } }
`;
