/** Where the panel goes full screen (the same width as chat-styles.ts's phone rules). */
const PHONE = '(max-width: 479.98px)';

/**
 * On a phone, sizes the full-screen panel to the visual viewport (`--parley-vv-height`, `--parley-vv-top`), so the
 * on-screen keyboard, which shrinks the visual viewport but not the layout one on iOS, never covers the composer.
 * Set through CSSOM (allowed under a strict CSP). Returns the function that stops following it.
 */
export function followVisualViewport(root: HTMLElement): () => void {
  const win = root.ownerDocument.defaultView;
  const viewport = win?.visualViewport;
  if (!win || !viewport) return () => {};
  const phone = win.matchMedia(PHONE);
  const update = () => {
    if (!phone.matches) {
      root.style.removeProperty('--parley-vv-height');
      root.style.removeProperty('--parley-vv-top');
      return;
    }
    root.style.setProperty('--parley-vv-height', `${viewport.height}px`);
    root.style.setProperty('--parley-vv-top', `${viewport.offsetTop}px`);
  };
  update();
  viewport.addEventListener('resize', update);
  viewport.addEventListener('scroll', update);
  phone.addEventListener('change', update);
  return () => {
    viewport.removeEventListener('resize', update);
    viewport.removeEventListener('scroll', update);
    phone.removeEventListener('change', update);
    root.style.removeProperty('--parley-vv-height');
    root.style.removeProperty('--parley-vv-top');
  };
}
