const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), textarea:not([disabled]), select:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * Keeps Tab and Shift+Tab inside the open panel (a modal dialog, WAI-ARIA APG "Dialog (Modal)"): from the last
 * control Tab goes to the first, from the first Shift+Tab to the last. Controls that are hidden or not rendered
 * are skipped.
 */
export function trapFocus(panel: HTMLElement): void {
  panel.addEventListener('keydown', (event) => {
    if (event.key !== 'Tab') return;
    const controls = [...panel.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
      (c) => c.tabIndex >= 0 && c.getClientRects().length > 0,
    );
    const first = controls[0];
    const last = controls.at(-1);
    if (!first || !last) return;
    const active = (panel.getRootNode() as ShadowRoot).activeElement;
    if (event.shiftKey && (active === first || !panel.contains(active))) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (active === last || !panel.contains(active))) {
      event.preventDefault();
      first.focus();
    }
  });
}
