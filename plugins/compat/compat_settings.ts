import { stringSetting } from '#settings/setting_types'
import { pluginSettings } from '#settings/settings_service'

const SYMBOL = /^[a-z0-9]{1,16}$/
const NETWORK = /^[a-z0-9-]{1,32}$/

/** The compat flavour's settings (names fixed by the interface spec). */
export const COMPAT_SETTINGS = {
  'compat.default_currency': stringSetting('cny', 'Fiat currency of compat orders that send none', {
    lowerCase: true,
    pattern: /^[a-z]{3,10}$/,
  }),
  'compat.default_token': stringSetting(
    '',
    'Token of compat orders that name none (empty: payer chooses)',
    {
      lowerCase: true,
      pattern: SYMBOL,
    }
  ),
  'compat.default_network': stringSetting(
    '',
    'Network of compat orders that name none (empty: payer chooses)',
    {
      lowerCase: true,
      pattern: NETWORK,
    }
  ),
}

export const compatSettings = pluginSettings(COMPAT_SETTINGS)
