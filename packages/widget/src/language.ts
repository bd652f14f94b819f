import { launcherStrings } from './strings/launcher.ts';

/** The languages the widget speaks (strings/*.ts): English, German, French, Spanish, Portuguese, Arabic, Hebrew. */
export const LANGUAGES = ['en', 'de', 'fr', 'es', 'pt', 'ar', 'he'] as const;
export type LanguageCode = (typeof LANGUAGES)[number];

/** Scripts written right to left (ISO 639 codes of the languages that use them). */
const RIGHT_TO_LEFT = new Set(['ar', 'he', 'iw', 'fa', 'ur', 'ps', 'sd', 'ug', 'yi', 'dv', 'ckb', 'syr']);

/** The language the widget shows: `tag` for the `lang` attribute, `code` names its strings, `dir` its direction. */
export interface Language {
  tag: string;
  code: LanguageCode;
  dir: 'ltr' | 'rtl';
}

/**
 * Picks the widget's language: the one asked for (`data-lang`, BCP 47), else the page's (`<html lang>`), else the
 * browser's preferences, else English. A tag counts by its primary subtag (`pt-BR` → Portuguese). An asked-for
 * language the widget does not speak is kept as the `lang` and direction when the site brings its own texts
 * (`ownTexts`: the `strings` option), so `data-lang="fa"` with Persian strings reads right to left; otherwise the
 * next candidate decides.
 */
export function resolveLanguage(asked: string | undefined, doc: Document, ownTexts = false): Language {
  const browser = doc.defaultView?.navigator;
  const candidates = [asked, doc.documentElement.lang, ...(browser?.languages ?? []), browser?.language];
  for (const tag of candidates) {
    const code = primary(tag);
    if (code && (LANGUAGES as readonly string[]).includes(code))
      return { tag: tag!, code: code as LanguageCode, dir: directionOf(code) };
    if (asked && tag === asked && code && ownTexts) return { tag: asked, code: 'en', dir: directionOf(code) };
  }
  return { tag: 'en', code: 'en', dir: 'ltr' };
}

/** The launcher's own texts in `language` (the rest arrive with the chat). */
export function launcherTexts(language: Language): (typeof launcherStrings)['en'] {
  return launcherStrings[language.code];
}

/** Fills `{name}`-style placeholders: `fill('{name} joined', { name: 'Kim' })`. Unknown ones are left as they are. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) =>
    key in values ? String(values[key]) : whole,
  );
}

function primary(tag: string | undefined | null): string | undefined {
  const code = tag?.trim().split(/[-_]/)[0]?.toLowerCase();
  return code || undefined;
}

function directionOf(code: string): 'ltr' | 'rtl' {
  return RIGHT_TO_LEFT.has(code) ? 'rtl' : 'ltr';
}
