/**
 * @parley/widget — the embeddable Parley chat widget. Most sites use the script tag served at `/widget.js`:
 *
 * ```html
 * <script src="https://chat.example.com/widget.js" data-company="COMPANY_ID" data-channel="CHANNEL_ID" async></script>
 * ```
 *
 * Bundlers can call {@link mountWidget} directly.
 */
export { LANGUAGES, type Language, type LanguageCode, resolveLanguage } from './language.ts';
export { type BlockNode, type Inline, parseMarkdown, renderMarkdown } from './markdown.ts';
export { defaultStrings, stringsFor, type WidgetStrings } from './strings.ts';
export { mountWidget, type WidgetHandle, type WidgetOptions } from './widget.ts';
