import {
  booleanSetting,
  integerSetting,
  listSetting,
  stringSetting,
  urlSetting,
} from '#settings/setting_types'
import { pluginSettings } from '#settings/settings_service'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'

export const DEFAULT_API_URL = 'https://api.telegram.org'

/**
 * A chat as sendMessage takes it: a numeric id (negative for groups and
 * channels, -100… for supergroups) or a public channel's @username.
 */
export const CHAT_ID = /^(-?\d{1,16}|@[A-Za-z][A-Za-z0-9_]{3,31})$/

/** What BotFather hands out: `<bot id>:<secret>`. */
const BOT_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/

/** The Telegram channel's own settings (its rules, `notify.telegram.enabled` …, come from channelRuleSettings). */
export const TELEGRAM_SETTINGS = {
  'notify.telegram.bot_token': stringSetting(
    '',
    'Bot API token from @BotFather (123456:ABC…), encrypted at rest',
    { maxLength: 128, pattern: BOT_TOKEN, secret: true }
  ),
  'notify.telegram.chat_ids': listSetting(
    [],
    'Chats that receive the notifications and may send commands: numeric ids (-100… for groups and channels) or @channelname, comma-separated',
    { item: CHAT_ID, itemHint: 'a chat id (a whole number) or an @channelname', maxItems: 50 }
  ),
  'notify.telegram.api_url': urlSetting(
    DEFAULT_API_URL,
    'Base URL of the Bot API (a local Bot API server or a proxy; empty: https://api.telegram.org)'
  ),
  'notify.telegram.commands': booleanSetting(
    true,
    'Answer /status, /order, /mute and /help from the listed chats (the process running jobs long-polls getUpdates)'
  ),
  'notify.telegram.update_offset': {
    ...integerSetting(
      0,
      'Next getUpdates offset (the last update handled + 1), kept so that a restart does not answer a command twice',
      { min: 0, max: Number.MAX_SAFE_INTEGER }
    ),
    internal: true,
  },
}

export const telegramSettings = pluginSettings(TELEGRAM_SETTINGS)

export type TelegramConfig = {
  /** The revealed token ('' when none, or when it cannot be decrypted: see `problem`). */
  token: string
  apiUrl: string
  chatIds: string[]
  /** '' when the channel can send; else what is missing. */
  problem: string
}

/** The settings the channel and the command poller work with, the token decrypted. */
export async function telegramConfig(): Promise<TelegramConfig> {
  const stored = await telegramSettings.get('notify.telegram.bot_token')
  const chatIds = await telegramSettings.get('notify.telegram.chat_ids')
  const apiUrl = (await telegramSettings.get('notify.telegram.api_url')) || DEFAULT_API_URL
  const problems: string[] = []
  let token = ''
  try {
    token = revealSecret(stored, SecretPurpose.setting('notify.telegram.bot_token'))
  } catch (error) {
    problems.push(`the bot token cannot be read: ${(error as Error).message}`)
  }
  if (stored === '') problems.push('no bot token (notify.telegram.bot_token)')
  if (chatIds.length === 0) problems.push('no chat ids (notify.telegram.chat_ids)')
  return { token, apiUrl: apiUrl.replace(/\/+$/, ''), chatIds, problem: problems.join('; ') }
}
