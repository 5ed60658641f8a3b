import { definePlugin } from '#plugin_host/gateway_plugin'
import { closedObject } from '#openapi/schemas'
import { HostedProvider } from '#plugins/provider/hosted_provider'
import { PROVIDER_SETTINGS } from '#plugins/provider/provider_settings'

const ProviderNotifyController = () => import('#plugins/provider/provider_notify_controller')
const hosted = new HostedProvider()

/** The hosted payment provider: the payer pays on its page, it notifies us. */
export default definePlugin({
  name: 'provider',
  description: 'Hosted payment provider: payment links and signed notifications',
  // lang/<locale>/settings.json: its settings' titles, labels and help on the console.
  folder: new URL('./', import.meta.url),
  adminSettings: {
    title: 'Provider account',
    description:
      'The hosted provider channel: the shop account, its shared token and where it calls back.',
    labels: {
      'provider.enabled': 'Offer the provider channel',
      'provider.shop_id': 'Shop id',
      'provider.shop_token': 'Shop token',
      'provider.api_url': 'Shop API URL',
      'provider.callback_url': 'Notification URL',
      'provider.return_url': 'Return URL',
      'provider.timeout_seconds': 'Timeout (seconds)',
      'provider.allow_tokens': 'Tokens offered',
    },
  },
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
    provider: {
      answer: async () => {
        const { enabled, tokens } = await hosted.offer()
        return { enabled, allow_tokens: tokens }
      },
      // The interface spec's config has the section whether the provider is on or off.
      whenOff: { enabled: false, allow_tokens: [] },
      schema: closedObject(
        {
          enabled: { type: 'boolean' },
          allow_tokens: {
            type: 'array',
            items: { type: 'string' },
            description: 'Tokens offered through the hosted provider',
          },
        },
        'The hosted provider channel'
      ),
    },
  },
})
