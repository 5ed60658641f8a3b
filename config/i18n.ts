import app from '@adonisjs/core/services/app'
import { defineConfig, formatters, loaders } from '@adonisjs/i18n'
import { pluginTranslations } from '#plugin_host/plugin_resources'

/**
 * Translations (resources/lang/<locale>/<area>.json: the file's path is its
 * keys' prefix, e.g. `cashier.pay.heading`) and the enabled plugins' own
 * (app/plugin_host/plugin_resources.ts), formatted as ICU messages
 * (plurals, numbers, dates per locale). English is every locale's fallback.
 *
 * - The cashier speaks the eight locales below (app/cashier/languages.ts).
 * - The admin console speaks English and Simplified Chinese
 *   (app/admin/admin_locale.ts).
 */
const i18nConfig = defineConfig({
  defaultLocale: 'en',
  supportedLocales: ['en', 'zh-CN', 'zh-TW', 'ja', 'ko', 'ru', 'es', 'vi'],
  formatter: formatters.icu(),
  // The core's texts, then each enabled plugin's (plugins/<name>/lang, keys `plugins.<name>.…`).
  loaders: [loaders.fs({ location: app.languageFilesPath() }), pluginTranslations],
})

export default i18nConfig
