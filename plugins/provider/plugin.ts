import { definePlugin } from '#app_plugins/gateway_plugin'
import { HostedProvider } from '#plugins/provider/hosted_provider'
import { PROVIDER_SETTINGS } from '#plugins/provider/provider_settings'

const ProviderNotifyController = () => import('#plugins/provider/provider_notify_controller')
const hosted = new HostedProvider()

/** The hosted payment provider: the payer pays on its page, it notifies us. */
export default definePlugin({
  name: 'provider',
  description: 'Hosted payment provider: payment links and signed notifications',
  providers: [hosted],
  routes: {
    define({ router, middleware }) {
      // The one route that accepts multipart bodies (the provider protocol allows them).
      router
        .post('/notify', [ProviderNotifyController, 'notify'])
        .use([middleware.throttle({ bucket: 'notify' }), middleware.multipartFields()])
    },
    // The provider expects "fail", not the envelope.
    plainTextFailures: ['/notify'],
  },
  settings: PROVIDER_SETTINGS,
  configSections: {
    provider: async () => {
      const { enabled, tokens } = await hosted.offer()
      return { enabled, allow_tokens: tokens }
    },
  },
})
