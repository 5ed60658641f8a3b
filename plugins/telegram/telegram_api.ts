import { redactSecrets } from '#support/http/redaction'

/** A sendMessage (or getMe) that takes longer is abandoned and counted as a retry (tests shorten it). */
export const botApiTiming = { requestTimeoutMs: 10_000 }

/**
 * What one Bot API call came to. Telegram answers
 * `{ ok: true, result }` or `{ ok: false, error_code, description, parameters? }`,
 * usually with the HTTP status equal to error_code, but a proxy or Telegram
 * itself may put an error in an HTTP 200: the body decides.
 */
export type BotApiAnswer<T = unknown> =
  | { kind: 'ok'; result: T }
  /** Telegram (or something speaking its format) refused: error_code and description. */
  | {
      kind: 'refused'
      code: number
      description: string
      /** parameters.retry_after, seconds (429). */
      retryAfter?: number
      /** parameters.migrate_to_chat_id: a group became a supergroup. */
      migrateTo?: number
    }
  /** No usable answer: the network, a timeout, an HTML error page, a body that is not the API's. */
  | { kind: 'unavailable'; error: string; status?: number }

export type BotApiTarget = { apiUrl: string; token: string }

/**
 * Removes the bot token from text that may hold it (the request URL is
 * `…/bot<token>/method`; an error may quote it) and any URL credentials.
 */
export function redactToken(text: string, token: string): string {
  let result = token.length > 0 ? text.split(token).join('<token>') : text
  result = result.replace(/\/bot[^/\s]+\//g, '/bot<token>/')
  return redactSecrets(result)
}

/**
 * One call of the Bot API (`POST {apiUrl}/bot<token>/<method>`, JSON).
 * Never throws: every failure becomes an answer, whose texts never hold the token.
 */
export async function callBotApi<T = unknown>(
  target: BotApiTarget,
  method: string,
  body: Record<string, unknown>,
  options: { timeoutMs?: number; signal?: AbortSignal } = {}
): Promise<BotApiAnswer<T>> {
  const timeoutMs = options.timeoutMs ?? botApiTiming.requestTimeoutMs
  const timeout = AbortSignal.timeout(timeoutMs)
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout
  let status: number
  let text: string
  try {
    const response = await fetch(`${target.apiUrl}/bot${target.token}/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept': 'application/json' },
      body: JSON.stringify(body),
      signal,
      redirect: 'error',
    })
    status = response.status
    text = await response.text()
  } catch (error) {
    const reason = timeout.aborted
      ? `no answer within ${timeoutMs / 1000} s`
      : describeFetchError(error)
    return { kind: 'unavailable', error: redactToken(`${method}: ${reason}`, target.token) }
  }

  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return {
      kind: 'unavailable',
      status,
      error: redactToken(
        `${method}: HTTP ${status}, not a Bot API answer (${excerpt(text)})`,
        target.token
      ),
    }
  }
  if (!isRecord(parsed) || typeof parsed.ok !== 'boolean') {
    return {
      kind: 'unavailable',
      status,
      error: redactToken(
        `${method}: HTTP ${status}, not a Bot API answer (${excerpt(text)})`,
        target.token
      ),
    }
  }
  if (parsed.ok && status >= 200 && status < 300) return { kind: 'ok', result: parsed.result as T }

  const code =
    typeof parsed.error_code === 'number' && Number.isInteger(parsed.error_code)
      ? parsed.error_code
      : status >= 400
        ? status
        : 500
  const description =
    typeof parsed.description === 'string' && parsed.description !== ''
      ? parsed.description
      : `HTTP ${status}`
  const parameters = isRecord(parsed.parameters) ? parsed.parameters : {}
  return {
    kind: 'refused',
    code,
    description: redactToken(description, target.token),
    retryAfter: positiveNumber(parameters.retry_after),
    migrateTo:
      typeof parameters.migrate_to_chat_id === 'number' ? parameters.migrate_to_chat_id : undefined,
  }
}

function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  if (error.name === 'AbortError') return 'aborted'
  // fetch's own message is "fetch failed"; the reason is in its cause (ECONNREFUSED …).
  const cause = (error as Error & { cause?: unknown }).cause
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: string }).code
    return code && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message
  }
  return error.message
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  if (flat === '') return 'empty body'
  return flat.length > 120 ? `${flat.slice(0, 120)}…` : flat
}

function positiveNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
