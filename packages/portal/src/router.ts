import type { SessionInfo } from './api.ts';
import type { PortalPageEntry } from './pages.ts';

export type { Role } from './pages.ts';

/** A page of pages.ts with what renders it. */
export interface PageDef extends PortalPageEntry {
  render(main: HTMLElement, session: SessionInfo): void | Promise<void>;
}

/** History-API navigation inside /portal; links marked `data-nav` are handled without a reload. */
export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  window.dispatchEvent(new Event('portal:navigate'));
}

/** `fn` learns whether the browser went back/forward (`popstate`) or the SPA navigated (`navigate`). */
export function onNavigate(fn: (how: 'popstate' | 'navigate') => void): void {
  window.addEventListener('popstate', () => fn('popstate'));
  window.addEventListener('portal:navigate', () => fn('navigate'));
  document.addEventListener('click', (event) => {
    const link = (event.target as Element | null)?.closest?.('a[data-nav]') as HTMLAnchorElement | null;
    if (
      !link ||
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey
    )
      return;
    event.preventDefault();
    navigate(link.pathname);
  });
}
