import type { Language, LanguageCode } from './language.ts';
import { ar } from './strings/ar.ts';
import { de } from './strings/de.ts';
import { en, type WidgetStrings } from './strings/en.ts';
import { es } from './strings/es.ts';
import { fr } from './strings/fr.ts';
import { he } from './strings/he.ts';
import { pt } from './strings/pt.ts';

export type { WidgetStrings } from './strings/en.ts';

/** The English texts: every key a site can override (`strings: { send: 'Go' }`, or `data-strings` as JSON). */
export const defaultStrings: WidgetStrings = en;

const TABLES: Record<LanguageCode, WidgetStrings> = { en, de, fr, es, pt, ar, he };

/** The texts in `language`, with the site's overrides on top (a key it leaves out keeps the translation). */
export function stringsFor(language: Language, overrides: Partial<WidgetStrings> = {}): WidgetStrings {
  return { ...TABLES[language.code], ...overrides };
}
