import { definePlugin } from '#app_plugins/gateway_plugin'
import { CompatCallbackFormat } from '#plugins/compat/compat_callback_format'
import { COMPAT_SETTINGS, compatSettings } from '#plugins/compat/compat_settings'

const CompatOrdersController = () => import('#plugins/compat/compat_orders_controller')

/**
 * The compat flavour: redirect-style order creation (form or query
 * parameters, MD5) and GET callbacks for orders of payment_type Compat.
 */
export default definePlugin({
  name: 'compat',
  description: 'Compat flavour: submit.php order creation (MD5) and GET callbacks',
  callbackFormats: [new CompatCallbackFormat()],
  routes: {
    define({ router }) {
      // Limited per merchant (pid) in the controller, once authenticated.
      router.route('/order/create-transaction/submit.php', ['GET', 'POST'], [CompatOrdersController, 'submit'])
    },
  },
  settings: COMPAT_SETTINGS,
  // The spec: a new installation seeds only the currency; token and network stay empty.
  seed: {
    settings: { 'compat.default_currency': 'cny', 'compat.default_token': '', 'compat.default_network': '' },
  },
  configSections: {
    compat: async () => ({
      default_token: await compatSettings.get('compat.default_token'),
      default_currency: await compatSettings.get('compat.default_currency'),
      default_network: await compatSettings.get('compat.default_network'),
    }),
  },
})
