import app from '@adonisjs/core/services/app'
import { defineConfig, formatters, loaders } from '@adonisjs/i18n'

/**
 * Translations (resources/lang/<locale>/<area>.json: the file's path is its
 * keys' prefix, e.g. `cashier.pay.heading`), formatted as ICU messages
 * (plurals, numbers, dates per locale). English is every locale's fallback.
 *
 * - The cashier speaks the eight locales below (app/cashier/languages.ts).
 * - The admin console speaks English and Simplified Chinese
 *   (app/console/console_locale.ts).
 */
const i18nConfig = defineConfig({
  defaultLocale: 'en',
  supportedLocales: ['en', 'zh-CN', 'zh-TW', 'ja', 'ko', 'ru', 'es', 'vi'],
  formatter: formatters.icu(),
  loaders: [loaders.fs({ location: app.languageFilesPath() })],
})

export default i18nConfig
