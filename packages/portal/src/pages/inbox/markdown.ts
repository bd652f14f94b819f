/**
 * The one markdown renderer of the inbox: the widget's (linear, never an HTML parser), so the agent's preview and
 * the transcript show exactly what visitors see. One import point keeps the portal → widget edge in one place.
 */
export { renderMarkdown } from '@parley/widget/markdown';
