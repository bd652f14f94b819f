/** An element factory bound to one document: `el('button', { type: 'button' }, 'Send')`. */
export type Build = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, string>,
  text?: string,
) => HTMLElementTagNameMap[K];

/** A builder of elements in `doc` (the widget's host document), attributes set, text as text (never HTML). */
export function builder(doc: Document): Build {
  return (tag, attrs = {}, text) => {
    const node = doc.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  };
}

/** A 24×24 icon drawn from one SVG path (the widget's icons are Material Icons paths: no icon font needed). */
export function icon(doc: Document, path: string): SVGSVGElement {
  const svg = doc.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const p = doc.createElementNS('http://www.w3.org/2000/svg', 'path');
  p.setAttribute('d', path);
  svg.append(p);
  return svg;
}
