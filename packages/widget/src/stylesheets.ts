/**
 * How the widget styles its Shadow DOM without inline styles, so it works under a strict Content-Security-Policy
 * (`style-src 'self'`, no `'unsafe-inline'`): constructable stylesheets adopted by the shadow root, which no CSP
 * restricts. Browsers without them (Safari before 16.4) get a `<style nonce>` when the site gives a nonce
 * (`data-nonce`), else a `<link rel="stylesheet">` to the same CSS served by Parley (`style-src` must then name
 * Parley's origin; docs in the widget README).
 */
export interface StyleSheets {
  /** Adds rules to the shadow root (the launcher's first, the chat's when it has loaded). */
  add(css: string): void;
}

export interface StyleOptions {
  /** The nonce of the site's `style-src 'nonce-…'`, for the fallback `<style>` element. */
  nonce?: string;
  /** Parley's copy of all the widget's CSS, for the fallback `<link>` (every rule is in it: later adds do nothing). */
  href?: string;
}

export function styleSheets(shadow: ShadowRoot, options: StyleOptions = {}): StyleSheets {
  const doc = shadow.ownerDocument;
  const view = doc.defaultView as (Window & typeof globalThis) | null;
  if (
    view &&
    'adoptedStyleSheets' in view.Document.prototype &&
    'replaceSync' in view.CSSStyleSheet.prototype
  ) {
    return {
      add(css) {
        const sheet = new view.CSSStyleSheet();
        sheet.replaceSync(css);
        shadow.adoptedStyleSheets = [...shadow.adoptedStyleSheets, sheet];
      },
    };
  }
  if (options.href && !options.nonce) {
    const link = doc.createElement('link');
    link.rel = 'stylesheet';
    link.href = options.href;
    shadow.append(link);
    return { add() {} };
  }
  return {
    add(css) {
      const style = doc.createElement('style');
      if (options.nonce) style.nonce = options.nonce;
      style.textContent = css;
      shadow.append(style);
    },
  };
}
