import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import settings from '#settings/settings_service'
import { callBotApi, type BotApiAnswer, type BotApiTarget } from '#plugins/telegram/telegram_api'
import { telegramConfig, telegramSettings } from '#plugins/telegram/telegram_settings'
import { sendHtml } from '#plugins/telegram/telegram_channel'
import { answerCommand, parseCommand } from '#plugins/telegram/telegram_commands'

const OFFSET_KEY = 'notify.telegram.update_offset'

/**
 * The pace of the poller. Telegram holds a getUpdates up to `timeout`
 * seconds; the HTTP request is given that plus a margin. Tests shorten them.
 */
export const pollerTiming = {
  pollSeconds: 25,
  /** Beyond the poll's own seconds, before the request is abandoned. */
  requestMarginMs: 10_000,
  /** After a 409 Conflict (another process polls this bot): longer than the other's poll. */
  conflictBackoffMs: 30_000,
  /** After a failure, doubling per failure in a row up to maxBackoffMs. */
  backoffMs: 1000,
  maxBackoffMs: 60_000,
}

type Chat = { id: number; type?: string; username?: string }
type Update = {
  update_id: number
  message?: { message_id: number; chat: Chat; text?: string; from?: { id: number } }
}

type PollerConfig = BotApiTarget & { chatIds: string[] }

/**
 * Admin commands from the allowed chats, by long polling getUpdates.
 *
 * One loop per process, kept here (module scope), started by the plugin's
 * job, which runs only in the process running jobs, never in a web
 * process. Telegram lets one getUpdates wait at a time per bot and ends the
 * older with 409 Conflict: the loop that gets it steps back for longer than
 * a poll, so two processes running jobs take turns instead of fighting.
 * Each update is claimed in the database before it is answered
 * (claimUpdates): neither a restart nor the other process answers it twice.
 */
class TelegramPoller {
  #controller: AbortController | null = null
  #done: Promise<void> | null = null

  get running() {
    return this.#done !== null
  }

  /** Starts the loop when the commands are wanted and it is not running; stops it when they are not. */
  async ensure(): Promise<void> {
    const wanted = await commandsWanted()
    if (wanted && !this.#done) this.#start()
    else if (!wanted && this.#done) await this.stop()
  }

  /** Ends the poll in flight and waits for the loop to leave. */
  async stop(): Promise<void> {
    const done = this.#done
    this.#controller?.abort()
    await done
  }

  #start() {
    const controller = new AbortController()
    this.#controller = controller
    const done = this.#loop(controller.signal)
      .catch((error) =>
        logger.error({ err: error }, 'telegram commands: the poller stopped on an error')
      )
      .finally(() => {
        if (this.#done === done) {
          this.#done = null
          this.#controller = null
        }
      })
    this.#done = done
    logger.info('telegram commands: polling getUpdates')
  }

  async #loop(signal: AbortSignal) {
    let failures = 0
    let token = ''
    let botUsername: string | null = null
    let conflictLogged = false
    let handledUpTo = 0
    while (!signal.aborted) {
      if (!(await commandsWanted())) break
      const config = await pollerConfig()
      if (config.token !== token) {
        token = config.token
        botUsername = null
      }
      if (botUsername === null) {
        const me = await callBotApi<{ username?: string }>(config, 'getMe', {}, { signal })
        if (signal.aborted) break
        if (me.kind !== 'ok') {
          failures++
          await this.#pause(me, failures, signal)
          continue
        }
        botUsername = me.result?.username ?? ''
      }

      // The larger of ours and the stored one (another process may have moved it on).
      const offset = Math.max(handledUpTo, await storedOffset())
      const answer = await callBotApi<Update[]>(
        config,
        'getUpdates',
        { offset, timeout: pollerTiming.pollSeconds, allowed_updates: ['message'] },
        { signal, timeoutMs: pollerTiming.pollSeconds * 1000 + pollerTiming.requestMarginMs }
      )
      if (signal.aborted) break
      if (answer.kind !== 'ok') {
        if (answer.kind === 'refused' && answer.code === 409) {
          if (!conflictLogged) {
            logger.warn(
              { description: answer.description },
              'telegram commands: another process polls this bot (409 Conflict); stepping back'
            )
            conflictLogged = true
          }
          await sleep(pollerTiming.conflictBackoffMs, signal)
          continue
        }
        failures++
        await this.#pause(answer, failures, signal)
        continue
      }
      failures = 0
      conflictLogged = false
      const updates = (Array.isArray(answer.result) ? answer.result : [])
        .filter((update) => Number.isSafeInteger(update?.update_id) && update.update_id >= offset)
        .sort((a, b) => a.update_id - b.update_id)
      if (updates.length === 0) continue
      handledUpTo = updates[updates.length - 1].update_id + 1
      // Only the updates no other process claimed first are answered.
      const claimed = await claimUpdates(updates)
      for (const update of claimed) {
        if (signal.aborted) break
        await this.#handle(update, config, botUsername, signal)
      }
    }
  }

  async #handle(update: Update, config: PollerConfig, botUsername: string, signal: AbortSignal) {
    const message = update.message
    if (!message || typeof message.text !== 'string' || !message.chat) return
    if (!allowed(message.chat, config.chatIds)) {
      logger.debug(
        { updateId: update.update_id, chat: message.chat.id },
        'telegram commands: a message from a chat not in notify.telegram.chat_ids; ignored'
      )
      return
    }
    const command = parseCommand(message.text, botUsername)
    if (!command) return
    let html: string
    try {
      html = await answerCommand(command)
    } catch (error) {
      logger.error({ err: error, command: command.name }, 'telegram commands: the command failed')
      html = 'The command failed; see the gateway’s log.'
    }
    const chatId = String(message.chat.id)
    let sent = await sendHtml(config, chatId, html, { signal })
    if (sent.kind === 'refused' && sent.code === 429 && sent.retryAfter !== undefined) {
      await sleep(Math.min(sent.retryAfter, 60) * 1000, signal)
      if (!signal.aborted) sent = await sendHtml(config, chatId, html, { signal })
    }
    if (sent.kind !== 'ok') {
      const error = sent.kind === 'refused' ? `${sent.code} ${sent.description}` : sent.error
      logger.warn(
        { chat: chatId, command: command.name, error },
        'telegram commands: the answer was not sent'
      )
    }
  }

  async #pause(answer: BotApiAnswer, failures: number, signal: AbortSignal) {
    if (answer.kind === 'ok') return
    const error = answer.kind === 'refused' ? `${answer.code} ${answer.description}` : answer.error
    let wait = Math.min(
      pollerTiming.maxBackoffMs,
      pollerTiming.backoffMs * 2 ** Math.min(failures - 1, 16)
    )
    if (answer.kind === 'refused' && answer.retryAfter !== undefined)
      wait = Math.max(wait, answer.retryAfter * 1000)
    // The first of a series is worth a warning; the rest repeat it.
    if (failures === 1) logger.warn({ error }, 'telegram commands: getUpdates failed; backing off')
    else logger.debug({ error, failures }, 'telegram commands: getUpdates failed again')
    await sleep(wait, signal)
  }
}

/** notify.telegram.enabled, notify.telegram.commands, a token and chats. */
async function commandsWanted(): Promise<boolean> {
  try {
    const enabled = await settings.read('notify.telegram.enabled')
    const commands = await telegramSettings.get('notify.telegram.commands')
    if (enabled !== true || !commands) return false
    const config = await telegramConfig()
    return config.token !== '' && config.chatIds.length > 0
  } catch (error) {
    logger.debug({ err: error }, 'telegram commands: settings not readable')
    return false
  }
}

async function pollerConfig(): Promise<PollerConfig> {
  const config = await telegramConfig()
  return { apiUrl: config.apiUrl, token: config.token, chatIds: config.chatIds }
}

/** A chat of the allow-list: by its id, or by its @username for a public channel or group. */
function allowed(chat: Chat, chatIds: string[]): boolean {
  if (chatIds.includes(String(chat.id))) return true
  const username = typeof chat.username === 'string' ? `@${chat.username.toLowerCase()}` : null
  return username !== null && chatIds.some((id) => id.toLowerCase() === username)
}

/** Read from the table, not the 2 s cache: another process may have moved it. */
async function storedOffset(): Promise<number> {
  const row = await db.from('settings').where('key', OFFSET_KEY).select('value').first()
  return offsetOf(row?.value)
}

function offsetOf(raw: unknown): number {
  const value = Number.parseInt(String(raw ?? '0'), 10)
  return Number.isSafeInteger(value) && value > 0 ? value : 0
}

/**
 * Claims `updates` (ascending) for this process: moves the stored offset
 * past the last of them, from the value it was read at (compare and set),
 * and returns those at or above that value. Two processes that got the
 * same updates (one polled between the other's getUpdates and its claim)
 * cannot both answer one: the second finds the offset moved and claims
 * only what lies beyond. The offset is stored before the updates are
 * answered: a restart does not answer them twice, and an update whose
 * answer fails is not retried forever.
 *
 * Machine state, not an operator's change: written without an audit row
 * (one per message would bury the operators' changes). Never moves back.
 */
export async function claimUpdates<T extends { update_id: number }>(updates: T[]): Promise<T[]> {
  if (updates.length === 0) return []
  const next = updates[updates.length - 1].update_id + 1
  await db
    .connection()
    .knexQuery()
    .table('settings')
    .insert({ key: OFFSET_KEY, type: 'integer', value: '0', updated_at: Date.now() })
    .onConflict('key')
    .ignore()
  for (;;) {
    const row = await db.from('settings').where('key', OFFSET_KEY).select('value').first()
    const raw = String(row?.value ?? '0')
    const current = offsetOf(raw)
    const fresh = updates.filter((update) => update.update_id >= current)
    if (fresh.length === 0) return []
    const moved = await db
      .from('settings')
      .where('key', OFFSET_KEY)
      .where('value', raw)
      .update({ type: 'integer', value: String(next), updated_at: Date.now() })
    if (Number(Array.isArray(moved) ? moved[0] : moved) === 1) {
      settings.invalidate()
      return fresh
    }
    // Another process moved it meanwhile: read it again.
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}

const telegramPoller = new TelegramPoller()

/** The plugin's job: every few seconds, starts (or stops) the loop as the settings say. */
export function ensureTelegramCommands(): Promise<void> {
  return telegramPoller.ensure()
}

/** Stops the loop (shutdown: the channel's close(), or stopJobs). Safe when it is not running. */
export function stopTelegramCommands(): Promise<void> {
  return telegramPoller.stop()
}

export function telegramCommandsRunning(): boolean {
  return telegramPoller.running
}
