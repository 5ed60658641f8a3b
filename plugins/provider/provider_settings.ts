import {
  booleanSetting,
  integerSetting,
  stringSetting,
  upperListSetting,
  urlSetting,
} from '#settings/setting_types'
import { pluginSettings } from '#settings/settings_service'

/** The hosted provider's settings. */
export const PROVIDER_SETTINGS = {
  'provider.enabled': booleanSetting(false, 'Offer the hosted provider channel'),
  'provider.shop_id': stringSetting('', 'Merchant shop id at the provider', { maxLength: 128 }),
  'provider.shop_token': stringSetting('', 'Shared secret with the provider (both directions)', {
    maxLength: 256,
    secret: true,
  }),
  'provider.api_url': urlSetting('', 'Base URL of the provider shop API'),
  'provider.callback_url': urlSetting(
    '',
    'Where the provider posts notifications (empty: {APP_URL}/payments/provider/v1/notify)'
  ),
  'provider.return_url': urlSetting(
    '',
    'Payer return page of provider payments (fallback after the order redirect_url)'
  ),
  'provider.timeout_seconds': integerSetting(10, 'HTTP timeout of the provider link request', {
    min: 1,
    max: 60,
  }),
  'provider.allow_tokens': upperListSetting(
    ['USDT', 'TRX'],
    'Tokens offered through the provider (comma-separated)'
  ),
}

export const providerSettings = pluginSettings(PROVIDER_SETTINGS)
