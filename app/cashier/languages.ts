import { readFileSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import type { HttpContext } from '@adonisjs/core/http'

/** Languages of the cashier page, in the switcher's order; the first is the fallback. */
export const LANGUAGES = ['en', 'zh-CN', 'zh-TW', 'ja', 'ko', 'ru', 'es', 'vi'] as const
export type Language = (typeof LANGUAGES)[number]
export const DEFAULT_LANGUAGE: Language = 'en'

/** Cookie that remembers the payer's choice of the switcher. */
export const LANGUAGE_COOKIE = 'cashier_lang'

export type Messages = Record<string, string>

/** One JSON file per language under resources/lang, read once. */
const catalog = new Map<Language, Messages>()

export function messagesOf(language: Language): Messages {
  let messages = catalog.get(language)
  if (!messages) {
    messages = JSON.parse(
      readFileSync(app.makePath('resources', 'lang', `${language}.json`), 'utf8')
    ) as Messages
    catalog.set(language, messages)
  }
  return messages
}

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value)
}

/**
 * Chinese arrives in many spellings (zh, zh-Hans, zh-HK…); script and
 * region decide between Simplified and Traditional.
 */
const ALIASES: Record<string, Language> = {
  'zh': 'zh-CN',
  'zh-hans': 'zh-CN',
  'zh-sg': 'zh-CN',
  'zh-hans-cn': 'zh-CN',
  'zh-hant': 'zh-TW',
  'zh-hk': 'zh-TW',
  'zh-mo': 'zh-TW',
  'zh-hant-tw': 'zh-TW',
  'zh-hant-hk': 'zh-TW',
}

/**
 * The page's language: `?lang=` (the switcher without script), else the
 * remembered cookie, else the best match of Accept-Language, else English.
 */
export function chooseLanguage(request: HttpContext['request'], explicit?: unknown): Language {
  if (isLanguage(explicit)) return explicit
  const remembered = request.plainCookie(LANGUAGE_COOKIE, { encoded: false })
  if (isLanguage(remembered)) return remembered

  const offered = [...LANGUAGES, ...Object.keys(ALIASES)]
  const best = request.language(offered)
  if (best === null) return DEFAULT_LANGUAGE
  return isLanguage(best) ? best : (ALIASES[best.toLowerCase()] ?? DEFAULT_LANGUAGE)
}

/** A translator for one language: `{name}` placeholders filled from `values`. */
export function translator(language: Language) {
  const messages = messagesOf(language)
  const fallback = messagesOf(DEFAULT_LANGUAGE)
  return (key: string, values: Record<string, string | number> = {}) => {
    const text = messages[key] ?? fallback[key] ?? key
    return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
      name in values ? String(values[name]) : whole
    )
  }
}
export type Translate = ReturnType<typeof translator>

/** The languages with their own names, for the switcher. */
export function languageChoices() {
  return LANGUAGES.map((code) => ({ code, name: messagesOf(code).language_name }))
}
