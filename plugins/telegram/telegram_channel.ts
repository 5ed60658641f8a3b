import type {
  NotificationChannel,
  NotificationMessage,
  SendOutcome,
} from '#notifications/notification_channel'
import { telegramConfig } from '#plugins/telegram/telegram_settings'
import { callBotApi, type BotApiAnswer, type BotApiTarget } from '#plugins/telegram/telegram_api'
import { renderMessage } from '#plugins/telegram/telegram_html'

/** Chats that no attempt can reach again until an operator acts (the description says which). */
const GONE_CHAT =
  /chat not found|user not found|bot was kicked|bot is not a member|chat was deactivated|upgraded to a supergroup|not enough rights|have no rights|need administrator rights/i

/** Sends one HTML message with Telegram's usual options. */
export function sendHtml(
  target: BotApiTarget,
  chatId: string,
  html: string,
  options: { signal?: AbortSignal } = {}
) {
  return callBotApi(
    target,
    'sendMessage',
    { chat_id: chatId, text: html, parse_mode: 'HTML', disable_web_page_preview: true },
    options
  )
}

/**
 * What an answer of sendMessage means for the delivery, as the Bot API
 * documents its errors:
 * - 429 Too Many Requests: wait `parameters.retry_after` seconds;
 * - 403 Forbidden (blocked by the user, kicked from the group): the chat is
 *   stopped until an operator clears it;
 * - 400 "chat not found" (and the like: a group migrated, rights missing):
 *   stopped as well, with Telegram's description for the console;
 * - any other 400 (entities that do not parse, a message too long): this
 *   message can never go, the next one may;
 * - 401/404 (a token revoked or mistyped), 5xx, the network, a timeout,
 *   an answer that is not the API's: tried again later.
 */
export function outcomeOf(answer: BotApiAnswer, chatId: string): SendOutcome {
  if (answer.kind === 'ok') return { status: 'delivered' }
  if (answer.kind === 'unavailable') return { status: 'retry', error: answer.error }
  const { code, description } = answer
  if (code === 429) {
    return answer.retryAfter !== undefined
      ? {
          status: 'retry',
          error: description,
          retryAfterMs: Math.ceil(answer.retryAfter * 1000),
          rateLimited: true,
        }
      : { status: 'retry', error: description, rateLimited: true }
  }
  if (code === 403) return { status: 'failed', error: description, stopTarget: true }
  if (code === 400 && GONE_CHAT.test(description)) {
    const moved =
      answer.migrateTo !== undefined ? ` (the chat is now ${answer.migrateTo}: list that id)` : ''
    return { status: 'failed', error: `${description}${moved}`, stopTarget: true }
  }
  if (code === 401 || code === 404) {
    return { status: 'retry', error: `${description}: check notify.telegram.bot_token` }
  }
  if (code >= 400 && code < 500)
    return { status: 'failed', error: `${description} (chat ${chatId})` }
  return { status: 'retry', error: description }
}

/**
 * Operator notifications through a Telegram bot: one sendMessage per event
 * and chat, in HTML parse mode, over the Bot API (`notify.telegram.api_url`).
 * The admin commands are answered by the poller (telegram_poller.ts),
 * stopped with the channel.
 */
export class TelegramChannel implements NotificationChannel {
  readonly name = 'telegram'
  readonly description = 'Telegram bot (Bot API sendMessage to chats and channels)'

  async targets(): Promise<string[]> {
    const config = await telegramConfig()
    return config.chatIds
  }

  async problem(): Promise<string> {
    const config = await telegramConfig()
    return config.problem
  }

  async send(message: NotificationMessage, target: string): Promise<SendOutcome> {
    const config = await telegramConfig()
    if (config.token === '') {
      return {
        status: 'retry',
        error: config.problem || 'no bot token (notify.telegram.bot_token)',
      }
    }
    const answer = await sendHtml(config, target, renderMessage(message))
    return outcomeOf(answer, target)
  }

  async close(): Promise<void> {
    // Loaded here, not at the top: the poller runs only where jobs run.
    const { stopTelegramCommands } = await import('#plugins/telegram/telegram_poller')
    await stopTelegramCommands()
  }
}

export const telegramChannel = new TelegramChannel()
