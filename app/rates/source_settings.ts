import { stringSetting, urlSetting, type SettingDefinition } from '#settings/setting_types'
import type { LiveRateSource } from '#rates/live_rate_source'

/**
 * The settings every rate source has, `rate.<name>.*`: its base URL (a
 * mirror, a proxy, a test's fake; empty: the source's own) and, for a
 * source that takes one, its API key (a secret). A source plugin lists
 * them among its settings: `settings: rateSourceSettings(source, { apiKey: true })`.
 */
export function rateSourceSettings(
  source: Pick<LiveRateSource, 'name' | 'description' | 'defaultUrl'>,
  options: { apiKey?: boolean; apiKeyHint?: string } = {}
): Record<string, SettingDefinition<any>> {
  const settings: Record<string, SettingDefinition<any>> = {
    [`rate.${source.name}.url`]: urlSetting(
      '',
      `Base URL of ${source.description} (empty: ${source.defaultUrl})`
    ),
  }
  if (options.apiKey)
    settings[`rate.${source.name}.api_key`] = stringSetting(
      '',
      `API key of ${source.description}${options.apiKeyHint ? ` (${options.apiKeyHint})` : ''}; empty: none`,
      { maxLength: 200, secret: true }
    )
  return settings
}
