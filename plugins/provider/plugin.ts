import { definePlugin } from '#app_plugins/gateway_plugin'
import { HostedProvider } from '#plugins/provider/hosted_provider'
import { PROVIDER_SETTINGS, providerSettings } from '#plugins/provider/provider_settings'

const ProviderNotifyController = () => import('#plugins/provider/provider_notify_controller')

/** The hosted payment provider: the payer pays on its page, it notifies us. */
export default definePlugin({
  name: 'provider',
  description: 'Hosted payment provider: payment links and signed notifications',
  providers: [new HostedProvider()],
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
    provider: async () => ({
      enabled: await providerSettings.get('provider.enabled'),
      allow_tokens: await providerSettings.get('provider.allow_tokens'),
    }),
  },
})
