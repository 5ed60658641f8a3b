import type { HttpContext } from '@adonisjs/core/http'
import i18nManager from '@adonisjs/i18n/services/main'
import type { I18n } from '@adonisjs/i18n'

declare module '@adonisjs/core/http' {
  interface HttpContext {
    /** The console's language for this request (set by applyAdminLocale). */
    i18n: I18n
  }
}

/** Languages of the admin console, in the account page's order; the first is the fallback. */
export const ADMIN_LOCALES = ['en', 'zh-CN'] as const
export type AdminLocale = (typeof ADMIN_LOCALES)[number]

/** Each language in its own words, for the account page's choice. */
export const ADMIN_LOCALE_NAMES: Record<AdminLocale, string> = {
  'en': 'English',
  'zh-CN': '简体中文',
}

export function isAdminLocale(value: unknown): value is AdminLocale {
  return typeof value === 'string' && (ADMIN_LOCALES as readonly string[]).includes(value)
}

/**
 * The browser's best match: any Chinese (zh, zh-Hans, zh-TW, zh-HK…) reads
 * the Simplified console rather than English, the only other one.
 */
export function localeFromBrowser(request: HttpContext['request']): AdminLocale {
  const best = request.language(['en', 'zh-CN', 'zh'])
  if (best === 'zh-CN' || best === 'zh') return 'zh-CN'
  if (best === 'en') return 'en'
  // Accept-Language: zh-TW, zh-Hant… are not offered above but still Chinese.
  const first = String(request.header('accept-language') ?? '')
    .split(',')
    .map((part) => part.split(';')[0].trim().toLowerCase())
    .find((tag) => tag !== '' && tag !== '*')
  return first?.startsWith('zh') ? 'zh-CN' : 'en'
}

/**
 * Sets the request's console language (the admin's choice, else the
 * browser's) on ctx.i18n and shares it with the views (`t()`, `locale`).
 */
export function applyAdminLocale(ctx: HttpContext, chosen?: string | null) {
  const locale = isAdminLocale(chosen) ? chosen : localeFromBrowser(ctx.request)
  const i18n = i18nManager.locale(locale)
  ctx.i18n = i18n
  ctx.view.share({ i18n, locale })
  return i18n
}
