import { definePlugin } from '#plugin_host/gateway_plugin'
import { channelRuleSettings } from '#notifications/channel_settings'
import { emailChannel } from '#plugins/email/email_channel'
import { EMAIL_SETTINGS } from '#plugins/email/email_settings'

/** Operator notifications by e-mail, through an SMTP server (one message per event, or digests). */
export default definePlugin({
  name: 'email',
  // lang/<locale>/settings.json: the channel's description and its settings' labels and help.
  folder: new URL('./', import.meta.url),
  description: 'Operator notifications by e-mail (SMTP: STARTTLS or TLS, per event or digests)',
  notificationChannels: [emailChannel],
  settings: { ...channelRuleSettings('email'), ...EMAIL_SETTINGS },
})
