/**
 * Readable colours for any theme (WCAG 2.1 SC 1.4.3, 4.5:1 for text): the widget's accent comes from the site
 * (`--parley-accent` on `:root`, or the `accentColor` option / `data-color`), so the text on it and the accent used as
 * text on the panel's background are computed from it rather than assumed.
 */
type Rgb = [number, number, number];

const MIN_CONTRAST = 4.5;
const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];

/**
 * Sets `--accent-text` (black or white, whichever reads better on the accent; a site's own `--parley-accent-text` is
 * kept) and `--accent-ink` (the accent, darkened or lightened until it reads on the background) on `root`, through
 * CSSOM (allowed by a strict Content-Security-Policy, unlike a `style` attribute).
 */
export function applyReadableColours(root: HTMLElement, accentColor?: string): void {
  if (accentColor) root.style.setProperty('--accent', accentColor);
  const style = root.ownerDocument.defaultView?.getComputedStyle(root);
  if (!style) return;
  const accent = parseColour(root, style.getPropertyValue('--accent'));
  const background = parseColour(root, style.getPropertyValue('--bg'));
  if (!accent || !background) return;
  if (!style.getPropertyValue('--parley-accent-text').trim()) {
    const text = contrast(WHITE, accent) >= contrast(BLACK, accent) ? '#ffffff' : '#000000';
    root.style.setProperty('--accent-text', text);
  }
  root.style.setProperty('--accent-ink', css(readableOn(accent, background)));
}

/** WCAG 2.1 contrast ratio of two sRGB colours, 1 to 21. */
export function contrast(a: Rgb, b: Rgb): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** `colour`, mixed step by step towards black (on a light background) or white (on a dark one) until it reads. */
export function readableOn(colour: Rgb, background: Rgb): Rgb {
  const towards = luminance(background) > 0.18 ? BLACK : WHITE;
  let mixed = colour;
  for (let step = 1; step <= 20 && contrast(mixed, background) < MIN_CONTRAST; step++)
    mixed = colour.map((c, i) => Math.round(c + (towards[i]! - c) * (step / 20))) as Rgb;
  return mixed;
}

/** Relative luminance (WCAG 2.1 definition). */
function luminance([r, g, b]: Rgb): number {
  const channel = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

/** Any CSS colour the browser understands, as sRGB: the browser resolves it on a probe element. */
function parseColour(root: HTMLElement, value: string): Rgb | undefined {
  if (!value.trim()) return undefined;
  const probe = root.ownerDocument.createElement('span');
  probe.style.color = value.trim();
  root.append(probe);
  const computed = root.ownerDocument.defaultView?.getComputedStyle(probe).color ?? '';
  probe.remove();
  const parts = computed.match(/[\d.]+/g)?.map(Number);
  if (!parts || parts.length < 3) return undefined;
  // `color(srgb 0.2 0.4 0.8)` comes as fractions; `rgb(51, 102, 204)` as 0–255.
  const scale = computed.startsWith('color(') ? 255 : 1;
  return [parts[0]! * scale, parts[1]! * scale, parts[2]! * scale].map(Math.round) as Rgb;
}

function css([r, g, b]: Rgb): string {
  return `rgb(${r}, ${g}, ${b})`;
}
