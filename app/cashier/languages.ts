import i18nManager from '@adonisjs/i18n/services/main'
import type { HttpContext } from '@adonisjs/core/http'

/** Languages of the cashier page, in the switcher's order; the first is the fallback. */
export const LANGUAGES = ['en', 'zh-CN', 'zh-TW', 'ja', 'ko', 'ru', 'es', 'vi'] as const
export type Language = (typeof LANGUAGES)[number]
export const DEFAULT_LANGUAGE: Language = 'en'

/** Cookie that remembers the payer's choice of the switcher. */
export const LANGUAGE_COOKIE = 'cashier_lang'

export type Messages = Record<string, string>

/** The cashier's keys in the shared catalogue: resources/lang/<locale>/cashier.json. */
const PREFIX = 'cashier.'

/** A language's cashier texts as written (ICU source, keys without their prefix), read once. */
const catalog = new Map<Language, Messages>()

export function messagesOf(language: Language): Messages {
  let messages = catalog.get(language)
  if (!messages) {
    messages = {}
    for (const [key, text] of Object.entries(i18nManager.getTranslationsFor(language)))
      if (key.startsWith(PREFIX)) messages[key.slice(PREFIX.length)] = String(text)
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

/**
 * A translator for one language: the ICU message (placeholders, plurals,
 * numbers as the locale writes them), English where the language lacks
 * the key, the key itself where English lacks it too.
 */
export function translator(language: Language) {
  const i18n = i18nManager.locale(language)
  return (key: string, values: Record<string, string | number> = {}) =>
    i18n.t(`${PREFIX}${key}`, values, key)
}
export type Translate = ReturnType<typeof translator>

/** The languages with their own names, for the switcher. */
export function languageChoices() {
  return LANGUAGES.map((code) => ({ code, name: messagesOf(code).language_name }))
}
