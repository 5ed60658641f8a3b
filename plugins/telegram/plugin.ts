import { definePlugin } from '#plugin_host/gateway_plugin'
import { channelRuleSettings } from '#notifications/channel_settings'
import { telegramChannel } from '#plugins/telegram/telegram_channel'
import { TELEGRAM_SETTINGS } from '#plugins/telegram/telegram_settings'

/** Operator notifications through a Telegram bot, and its admin commands. */
export default definePlugin({
  name: 'telegram',
  // lang/<locale>/settings.json: the channel's description and its settings' labels and help.
  folder: new URL('./', import.meta.url),
  description:
    'Operator notifications through a Telegram bot (Bot API), with /status, /order and /mute',
  notificationChannels: [telegramChannel],
  settings: { ...channelRuleSettings('telegram'), ...TELEGRAM_SETTINGS },
  jobs: [
    {
      // Cheap when nothing changes: starts the long-poll loop once (it keeps
      // its own pace), stops it when the commands are turned off.
      name: 'telegram.commands',
      everySeconds: 5,
      async run() {
        const { ensureTelegramCommands } = await import('#plugins/telegram/telegram_poller')
        await ensureTelegramCommands()
      },
    },
  ],
})
