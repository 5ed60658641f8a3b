import { definePlugin } from '#plugin_host/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { jsonSource } from '#plugins/rate_json/json_source'

export default definePlugin({
  name: 'rate_json',
  description: 'Exchange rates from a JSON rate API ({url}/{fiat}.json)',
  // lang/<locale>/settings.json: its settings' titles, labels and help on the console.
  folder: new URL('./', import.meta.url),
  adminSettings: { group: 'rates', labels: { 'rate.json.url': 'Generic JSON source URL' } },
  rateSources: [jsonSource],
  // Its URL has no default: the setting's text says the source stays unused while it is empty.
  settings: rateSourceSettings({ ...jsonSource, defaultUrl: 'none, the source is not asked' }),
})
