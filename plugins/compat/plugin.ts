import { definePlugin } from '#plugin_host/gateway_plugin'
import { CompatCallbackFormat } from '#plugins/compat/compat_callback_format'
import { COMPAT_SETTINGS, compatSettings } from '#plugins/compat/compat_settings'
import { compatIntegration } from '#plugins/compat/compat_integration'
import { compatConfigSchema, compatOpenApi } from '#plugins/compat/compat_openapi'

const CompatOrdersController = () => import('#plugins/compat/compat_orders_controller')
const CompatApiController = () => import('#plugins/compat/compat_api_controller')

/**
 * The compat flavour: EPay's merchant protocol (form or query parameters,
 * MD5) and GET callbacks for orders of payment_type Compat. An EPay SDK
 * takes `{APP_URL}/payments/compat/v1/order/create-transaction/` as its
 * base URL and appends submit.php, mapi.php and api.php to it.
 */
export default definePlugin({
  name: 'compat',
  description: 'Compat flavour: EPay submit.php, mapi.php and api.php (MD5) and GET callbacks',
  // lang/<locale>/settings.json: its settings' titles, labels and help on the console.
  folder: new URL('./', import.meta.url),
  // The EPay card of each API key's integration page (views/admin/integration.edge).
  integrationSections: [compatIntegration],
  adminSettings: {
    title: 'Compat defaults',
    description:
      'What a compat (EPay-style) order gets when its request names no currency, token or network.',
    labels: {
      'compat.default_currency': 'Default currency',
      'compat.default_token': 'Default token',
      'compat.default_network': 'Default network',
    },
  },
  callbackFormats: [new CompatCallbackFormat()],
  routes: {
    define({ router }) {
      // Limited per merchant (pid) in the controllers, once authenticated.
      router.route(
        '/order/create-transaction/submit.php',
        ['GET', 'POST'],
        [CompatOrdersController, 'submit']
      )
      // EPay JSON: every outcome is an answer with a code, a GET to mapi.php too.
      router.route(
        '/order/create-transaction/mapi.php',
        ['GET', 'POST'],
        [CompatOrdersController, 'mapi']
      )
      router.route(
        '/order/create-transaction/api.php',
        ['GET', 'POST'],
        [CompatApiController, 'handle']
      )
    },
  },
  settings: COMPAT_SETTINGS,
  // The spec: a new installation seeds only the currency; token and network stay empty.
  seed: {
    settings: {
      'compat.default_currency': 'cny',
      'compat.default_token': '',
      'compat.default_network': '',
    },
  },
  configSections: {
    compat: {
      answer: async () => ({
        default_token: await compatSettings.get('compat.default_token'),
        default_currency: await compatSettings.get('compat.default_currency'),
        default_network: await compatSettings.get('compat.default_network'),
      }),
      // The interface spec's config has the section whether the flavour is on or off.
      whenOff: { default_token: '', default_currency: '', default_network: '' },
      schema: compatConfigSchema,
    },
  },
  openapi: compatOpenApi,
})
