import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A local Bot API (https://core.telegram.org/bots/api) that answers the way
 * Telegram does, worst habits included:
 * - every answer is `{ ok, result }` or `{ ok: false, error_code, description, parameters? }`;
 * - a wrong token: 401 Unauthorized; an unknown method: 404 Not Found;
 * - sendMessage: unknown chat → 400 "chat not found", a chat that blocked
 *   the bot → 403, HTML that does not parse → 400 "can't parse entities",
 *   more than 4096 characters of text (after parsing) → 400 "message is too long",
 *   over the configured rate → 429 with `parameters.retry_after`;
 * - injected failures: a 502 HTML page, a 500 JSON error, an error in an
 *   HTTP 200, a body that is not JSON, a request left hanging;
 * - getUpdates long polling: confirms the updates below `offset`, answers
 *   at once when updates wait, else holds until one is queued or `timeout`
 *   seconds pass; a second getUpdates while one is held ends the held one
 *   with 409 Conflict "terminated by other getUpdates request".
 */

export const FAKE_BOT_TOKEN = '123456789:AAEfakeTokenForTheTestsOnly_abcdefghij'

export type FakeChat = {
  id: number
  type: 'private' | 'group' | 'supergroup' | 'channel'
  username?: string
  title?: string
  blocked?: boolean
}

export type AcceptedMessage = {
  chatId: number
  /** As sent (HTML). */
  html: string
  /** The text Telegram shows: tags removed, entities decoded. */
  text: string
  /** The links of the message (<a href>), as decoded. */
  links: { href: string; text: string }[]
  bold: string[]
  at: number
}

export type Injected =
  | 'html_502'
  /** A proxy's error page quoting the request's path (and so the token in it). */
  | 'echo_url_502'
  | 'json_500'
  | 'error_in_200'
  | 'not_json_200'
  | 'hang'
  | { status: number; body: unknown }

export type PollRecord = {
  offset: number
  timeout: number
  startedAt: number
  endedAt: number | null
  outcome: 'updates' | 'empty' | 'conflict' | 'closed' | null
}

type HeldPoll = {
  offset: number
  limit: number
  timer: NodeJS.Timeout
  response: ServerResponse
  record: PollRecord
}

type Update = { update_id: number; message: Record<string, unknown> }

const MESSAGE_LIMIT = 4096
const SUPPORTED_TAGS = new Set([
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'a',
  'code',
  'pre',
  'span',
  'tg-spoiler',
  'tg-emoji',
  'blockquote',
])
const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' }

export class EntityError extends Error {}

/**
 * Telegram's HTML parse mode, in the part that matters: supported tags only,
 * each closed in order, `<a>` with an href, the four named entities and
 * numeric ones, nothing else after an `&`. Returns the shown text.
 */
export function parseTelegramHtml(html: string): {
  text: string
  links: { href: string; text: string }[]
  bold: string[]
} {
  const bytes = (index: number) => Buffer.byteLength(html.slice(0, index))
  const stack: { name: string; start: number; href?: string }[] = []
  const links: { href: string; text: string }[] = []
  const bold: string[] = []
  let text = ''
  let index = 0
  const decodeEntity = (at: number): [string, number] => {
    const match = /^&(#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]+);/.exec(html.slice(at, at + 12))
    if (!match)
      throw new EntityError(`Can't find end of the entity starting at byte offset ${bytes(at)}`)
    const name = match[1]
    let value: string | undefined
    if (name.startsWith('#x')) value = String.fromCodePoint(Number.parseInt(name.slice(2), 16))
    else if (name.startsWith('#')) value = String.fromCodePoint(Number.parseInt(name.slice(1), 10))
    else value = NAMED_ENTITIES[name]
    if (value === undefined)
      throw new EntityError(`Unsupported HTML entity "&${name};" at byte offset ${bytes(at)}`)
    return [value, match[0].length]
  }
  while (index < html.length) {
    const char = html[index]
    if (char === '&') {
      const [value, length] = decodeEntity(index)
      text += value
      index += length
      continue
    }
    if (char !== '<') {
      text += char
      index++
      continue
    }
    const end = html.indexOf('>', index)
    if (end === -1) throw new EntityError(`Unclosed start tag at byte offset ${bytes(index)}`)
    const inner = html.slice(index + 1, end)
    if (inner.startsWith('/')) {
      const name = inner.slice(1).trim().toLowerCase()
      const open = stack.pop()
      if (!open || open.name !== name) {
        throw new EntityError(
          `Unmatched end tag at byte offset ${bytes(index)}, expected "</${open?.name ?? ''}>", found "</${name}>"`
        )
      }
      const shown = text.slice(open.start)
      if (name === 'a') links.push({ href: open.href ?? '', text: shown })
      if (name === 'b' || name === 'strong') bold.push(shown)
      index = end + 1
      continue
    }
    const nameMatch = /^([a-zA-Z][a-zA-Z0-9-]*)([\s\S]*)$/.exec(inner)
    if (!nameMatch) throw new EntityError(`Unexpected start tag at byte offset ${bytes(index)}`)
    const name = nameMatch[1].toLowerCase()
    if (!SUPPORTED_TAGS.has(name))
      throw new EntityError(`Unsupported start tag "${name}" at byte offset ${bytes(index)}`)
    let href: string | undefined
    const attributes = nameMatch[2].trim()
    if (name === 'a') {
      const hrefMatch = /^href\s*=\s*"([^"]*)"$/.exec(attributes)
      if (!hrefMatch)
        throw new EntityError(`Can't find the href of the link at byte offset ${bytes(index)}`)
      href = hrefMatch[1].replace(/&(lt|gt|amp|quot);/g, (_, entity) => NAMED_ENTITIES[entity])
      if (!/^(https?|tg):\/\//.test(href))
        throw new EntityError(`Wrong HTTP URL "${href}" at byte offset ${bytes(index)}`)
    } else if (attributes !== '' && name !== 'span' && name !== 'code' && name !== 'tg-emoji') {
      throw new EntityError(`Unexpected attribute of tag "${name}" at byte offset ${bytes(index)}`)
    }
    stack.push({ name, start: text.length, href })
    index = end + 1
  }
  if (stack.length > 0) {
    throw new EntityError(
      `Can't find end tag corresponding to start tag "${stack[stack.length - 1].name}"`
    )
  }
  return { text, links, bold }
}

export class FakeTelegram {
  token = FAKE_BOT_TOKEN
  readonly botUsername = 'gateway_test_bot'
  /** Messages sendMessage accepted, in order. */
  readonly accepted: AcceptedMessage[] = []
  /** Every call: method and HTTP status answered. */
  readonly calls: { method: string; status: number; body: Record<string, unknown>; at: number }[] =
    []
  readonly polls: PollRecord[] = []
  /** Most sendMessage calls per chat in any second; beyond: 429. 0: no limit. */
  perChatPerSecond = 0
  /** Most sendMessage calls of the bot (all chats) in any second (Telegram's is about 30); beyond: 429. 0: no limit. */
  perBotPerSecond = 0
  /** The retry_after (seconds) of a 429. */
  retryAfterSeconds = 3

  #server: Server | null = null
  #chats = new Map<number, FakeChat>()
  #sentAt = new Map<number, number[]>()
  #botSentAt: number[] = []
  #injected: Injected[] = []
  #updates: Update[] = []
  /** Every update queued, for unconfirm(). */
  #history: Update[] = []
  #nextUpdateId = 700_000_001
  #nextMessageId = 1
  #held: HeldPoll | null = null
  #hanging = new Set<ServerResponse>()

  get url(): string {
    const address = this.#server?.address() as AddressInfo | null
    if (!address) throw new Error('the fake Bot API is not started')
    return `http://127.0.0.1:${address.port}`
  }

  async start() {
    this.#server = createServer((request, response) => {
      this.#handle(request, response).catch((error) => {
        if (!response.headersSent)
          this.#answer(response, 500, { ok: false, error_code: 500, description: String(error) })
      })
    })
    this.#server.keepAliveTimeout = 1000
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
  }

  async stop() {
    this.reset()
    const server = this.#server
    this.#server = null
    if (!server) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  /** Forgets chats, messages, updates and injected failures; ends any held poll or hanging request. */
  reset() {
    this.accepted.length = 0
    this.calls.length = 0
    this.polls.length = 0
    this.#chats.clear()
    this.#sentAt.clear()
    this.#botSentAt = []
    this.#injected = []
    this.#updates = []
    this.#history = []
    this.perChatPerSecond = 0
    this.perBotPerSecond = 0
    this.retryAfterSeconds = 3
    this.token = FAKE_BOT_TOKEN
    if (this.#held) this.#endHeld('closed', 200, { ok: true, result: [] })
    for (const response of this.#hanging) response.destroy()
    this.#hanging.clear()
  }

  addChat(chat: FakeChat) {
    this.#chats.set(chat.id, chat)
  }

  blockChat(id: number) {
    const chat = this.#chats.get(id)
    if (chat) chat.blocked = true
  }

  /** The next requests (any method but getUpdates) answer these, in order. */
  inject(...failures: Injected[]) {
    this.#injected.push(...failures)
  }

  /** A text message from `chatId` (added as a private chat if unknown), delivered to the poller. */
  queueMessage(chatId: number, text: string) {
    if (!this.#chats.has(chatId)) this.addChat({ id: chatId, type: 'private' })
    const chat = this.#chats.get(chatId)!
    const update: Update = {
      update_id: this.#nextUpdateId++,
      message: {
        message_id: this.#nextMessageId++,
        from: { id: chatId > 0 ? chatId : 4242, is_bot: false, first_name: 'Operator' },
        chat: {
          id: chat.id,
          type: chat.type,
          ...(chat.username ? { username: chat.username } : {}),
          ...(chat.title ? { title: chat.title } : {}),
        },
        date: Math.floor(Date.now() / 1000),
        text,
      },
    }
    this.#updates.push(update)
    this.#history.push(update)
    this.#releaseHeld()
    return update.update_id
  }

  /**
   * Forgets every confirmation: what a bot sees when it stopped after
   * receiving updates and before its next getUpdates confirmed them (only
   * the offset it kept keeps it from handling them again).
   */
  unconfirm() {
    this.#updates = [...this.#history]
  }

  /** Updates not yet confirmed by an offset. */
  get pendingUpdates(): number {
    return this.#updates.length
  }

  /** Messages accepted for one chat. */
  messagesTo(chatId: number): AcceptedMessage[] {
    return this.accepted.filter((message) => message.chatId === chatId)
  }

  get pollHeld(): boolean {
    return this.#held !== null
  }

  async #handle(request: IncomingMessage, response: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const url = new URL(request.url ?? '/', 'http://fake')
    const match = /^\/bot([^/]*)\/([A-Za-z]+)$/.exec(url.pathname)
    let body: Record<string, unknown> = Object.fromEntries(url.searchParams)
    if (raw !== '') {
      const type = request.headers['content-type'] ?? ''
      try {
        body = type.includes('json')
          ? JSON.parse(raw)
          : { ...body, ...Object.fromEntries(new URLSearchParams(raw)) }
      } catch {
        return this.#error(response, 'unknown', 400, 'Bad Request: invalid JSON', body)
      }
    }
    if (!match) return this.#error(response, 'unknown', 404, 'Not Found', body)
    const [, token, methodName] = match
    const method = methodName.toLowerCase()
    if (token !== this.token) return this.#error(response, method, 401, 'Unauthorized', body)

    if (method !== 'getupdates') {
      const injected = this.#injected.shift()
      if (injected !== undefined)
        return this.#inject(response, method, injected, body, url.pathname)
    }
    switch (method) {
      case 'getme':
        return this.#ok(response, method, body, {
          id: Number(this.token.split(':')[0]),
          is_bot: true,
          first_name: 'Gateway',
          username: this.botUsername,
        })
      case 'sendmessage':
        return this.#sendMessage(response, body)
      case 'getupdates':
        return this.#getUpdates(response, body)
      default:
        return this.#error(response, method, 404, 'Not Found', body)
    }
  }

  #sendMessage(response: ServerResponse, body: Record<string, unknown>) {
    const method = 'sendmessage'
    const chat = this.#findChat(body.chat_id)
    if (!chat) return this.#error(response, method, 400, 'Bad Request: chat not found', body)
    if (chat.blocked) {
      const description =
        chat.type === 'private'
          ? 'Forbidden: bot was blocked by the user'
          : `Forbidden: bot was kicked from the ${chat.type} chat`
      return this.#error(response, method, 403, description, body)
    }
    const now = Date.now()
    const recent = (this.#sentAt.get(chat.id) ?? []).filter((at) => now - at < 1000)
    this.#sentAt.set(chat.id, recent)
    this.#botSentAt = this.#botSentAt.filter((at) => now - at < 1000)
    if (
      (this.perChatPerSecond > 0 && recent.length >= this.perChatPerSecond) ||
      (this.perBotPerSecond > 0 && this.#botSentAt.length >= this.perBotPerSecond)
    ) {
      return this.#answer(
        response,
        429,
        {
          ok: false,
          error_code: 429,
          description: `Too Many Requests: retry after ${this.retryAfterSeconds}`,
          parameters: { retry_after: this.retryAfterSeconds },
        },
        method,
        body
      )
    }
    const html = typeof body.text === 'string' ? body.text : ''
    let parsed: ReturnType<typeof parseTelegramHtml> = { text: html, links: [], bold: [] }
    if (typeof body.parse_mode === 'string' && body.parse_mode.toLowerCase() === 'html') {
      try {
        parsed = parseTelegramHtml(html)
      } catch (error) {
        if (!(error instanceof EntityError)) throw error
        return this.#error(
          response,
          method,
          400,
          `Bad Request: can't parse entities: ${error.message}`,
          body
        )
      }
    } else if (body.parse_mode !== undefined) {
      return this.#error(response, method, 400, 'Bad Request: unsupported parse_mode', body)
    }
    if (parsed.text.trim() === '')
      return this.#error(response, method, 400, 'Bad Request: message text is empty', body)
    if (parsed.text.length > MESSAGE_LIMIT)
      return this.#error(response, method, 400, 'Bad Request: message is too long', body)
    const at = Date.now()
    this.#sentAt.get(chat.id)!.push(at)
    this.#botSentAt.push(at)
    this.accepted.push({
      chatId: chat.id,
      html,
      text: parsed.text,
      links: parsed.links,
      bold: parsed.bold,
      at,
    })
    return this.#ok(response, method, body, {
      message_id: this.#nextMessageId++,
      date: Math.floor(at / 1000),
      chat: { id: chat.id, type: chat.type },
      text: parsed.text,
    })
  }

  #getUpdates(response: ServerResponse, body: Record<string, unknown>) {
    const offset = Number(body.offset ?? 0) || 0
    const timeout = Math.min(Math.max(Number(body.timeout ?? 0) || 0, 0), 50)
    const limit = Math.min(Math.max(Number(body.limit ?? 100) || 100, 1), 100)
    // An offset confirms every update below it: they are never returned again.
    if (offset > 0) this.#updates = this.#updates.filter((update) => update.update_id >= offset)
    // Only one getUpdates at a time: the one waiting is ended.
    if (this.#held) {
      this.#endHeld('conflict', 409, {
        ok: false,
        error_code: 409,
        description:
          'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
      })
    }
    const record: PollRecord = {
      offset,
      timeout,
      startedAt: Date.now(),
      endedAt: null,
      outcome: null,
    }
    this.polls.push(record)
    const ready = this.#updates.slice(0, limit)
    if (ready.length > 0 || timeout === 0) {
      record.endedAt = Date.now()
      record.outcome = ready.length > 0 ? 'updates' : 'empty'
      return this.#ok(response, 'getupdates', body, ready)
    }
    const timer = setTimeout(() => {
      if (this.#held?.response === response) this.#endHeld('empty', 200, { ok: true, result: [] })
    }, timeout * 1000)
    this.#held = { offset, limit, timer, response, record }
    response.on('close', () => {
      if (this.#held?.response === response) {
        clearTimeout(this.#held.timer)
        this.#held.record.endedAt = Date.now()
        this.#held.record.outcome = 'closed'
        this.#held = null
      }
    })
  }

  #releaseHeld() {
    const held = this.#held
    if (!held) return
    const ready = this.#updates
      .filter((update) => update.update_id >= held.offset)
      .slice(0, held.limit)
    if (ready.length > 0) this.#endHeld('updates', 200, { ok: true, result: ready })
  }

  #endHeld(outcome: PollRecord['outcome'], status: number, payload: unknown) {
    const held = this.#held!
    this.#held = null
    clearTimeout(held.timer)
    held.record.endedAt = Date.now()
    held.record.outcome = outcome
    this.#answer(held.response, status, payload, 'getupdates', { offset: held.offset })
  }

  #findChat(value: unknown): FakeChat | undefined {
    if (typeof value === 'number') return this.#chats.get(value)
    if (typeof value !== 'string') return undefined
    if (/^-?\d+$/.test(value)) return this.#chats.get(Number(value))
    if (value.startsWith('@')) {
      const name = value.slice(1).toLowerCase()
      return [...this.#chats.values()].find((chat) => chat.username?.toLowerCase() === name)
    }
    return undefined
  }

  #inject(
    response: ServerResponse,
    method: string,
    injected: Injected,
    body: Record<string, unknown>,
    path: string
  ) {
    if (injected === 'hang') {
      this.#hanging.add(response)
      this.calls.push({ method, status: 0, body, at: Date.now() })
      response.on('close', () => this.#hanging.delete(response))
      return
    }
    if (injected === 'html_502') {
      this.calls.push({ method, status: 502, body, at: Date.now() })
      response.writeHead(502, { 'content-type': 'text/html' })
      response.end(
        '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>'
      )
      return
    }
    if (injected === 'echo_url_502') {
      this.calls.push({ method, status: 502, body, at: Date.now() })
      response.writeHead(502, { 'content-type': 'text/html' })
      response.end(`<html><body>502: upstream failed for POST ${path}</body></html>`)
      return
    }
    if (injected === 'not_json_200') {
      this.calls.push({ method, status: 200, body, at: Date.now() })
      response.writeHead(200, { 'content-type': 'text/html' })
      response.end('<html><body>Welcome to the captive portal</body></html>')
      return
    }
    if (injected === 'json_500')
      return this.#error(response, method, 500, 'Internal Server Error: restart', body)
    if (injected === 'error_in_200') {
      return this.#answer(
        response,
        200,
        { ok: false, error_code: 400, description: "Bad Request: can't parse entities: injected" },
        method,
        body
      )
    }
    return this.#answer(response, injected.status, injected.body, method, body)
  }

  #ok(response: ServerResponse, method: string, body: Record<string, unknown>, result: unknown) {
    this.#answer(response, 200, { ok: true, result }, method, body)
  }

  #error(
    response: ServerResponse,
    method: string,
    code: number,
    description: string,
    body: Record<string, unknown>
  ) {
    this.#answer(response, code, { ok: false, error_code: code, description }, method, body)
  }

  #answer(
    response: ServerResponse,
    status: number,
    payload: unknown,
    method = 'unknown',
    body: Record<string, unknown> = {}
  ) {
    this.calls.push({ method, status, body, at: Date.now() })
    if (response.destroyed) return
    response.writeHead(status, { 'content-type': 'application/json' })
    response.end(JSON.stringify(payload))
  }
}
