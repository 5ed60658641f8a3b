import { definePlugin } from '#plugin_host/gateway_plugin'
import { channelRuleSettings } from '#notifications/channel_settings'
import { WEBHOOK_SETTINGS, webhookChannel } from '#plugins/webhook/webhook_channel'

export default definePlugin({
  name: 'webhook',
  // lang/<locale>/settings.json: the channel's description and its settings' labels and help.
  folder: new URL('./', import.meta.url),
  description: 'Operator notifications as signed JSON POSTs to a URL',
  notificationChannels: [webhookChannel],
  settings: { ...channelRuleSettings('webhook'), ...WEBHOOK_SETTINGS },
})
