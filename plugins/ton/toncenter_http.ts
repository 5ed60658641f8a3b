import type { TonClientParameters } from '@ton/ton'
import { parseRetryAfter, RpcHttpError, type RpcPool } from '#chains/rpc_pool'

export type HttpAdapter = NonNullable<TonClientParameters['httpAdapter']>
type AdapterConfig = Parameters<HttpAdapter>[0]

/** Why toncenter refused: its `error` text, or `result` (its rate-limit answer puts the text there). */
function reasonOf(answer: unknown): string {
  const body = answer as { error?: unknown; result?: unknown } | null
  if (typeof body?.error === 'string') return body.error
  if (typeof body?.result === 'string') return body.result
  return ''
}

/**
 * A non-2xx toncenter answer. `answer` is the parsed body: toncenter says
 * why (e.g. "Ratelimit exceed" with 429, or the liteserver's "cannot
 * locate transaction" for an unknown transaction id).
 */
export class ToncenterHttpError extends RpcHttpError {
  constructor(
    status: number,
    retryAfterMs: number | null,
    readonly answer: unknown
  ) {
    const why = reasonOf(answer)
    super(`toncenter answered HTTP ${status}${why ? `: ${why}` : ''}`, status, retryAfterMs)
  }

  get reason(): string {
    return reasonOf(this.answer)
  }
}

function headersOf(config: AdapterConfig): Record<string, string> {
  const raw = config.headers as unknown as
    { toJSON?: () => Record<string, unknown> } | Record<string, unknown>
  const entries =
    typeof raw?.toJSON === 'function' ? raw.toJSON() : (raw as Record<string, unknown>)
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(entries ?? {})) {
    if (value !== undefined && value !== null && value !== false) headers[name] = String(value)
  }
  return headers
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * The HTTP transport of the @ton/ton client (its `httpAdapter`): every
 * request first waits for the pool's permit for `url` (the endpoint's
 * request budget: pacing and the daily count), and a non-2xx answer is a
 * ToncenterHttpError, so that the pool tells a rate limit from an outage.
 */
export function permittedAdapter(pool: RpcPool, url: string): HttpAdapter {
  return (async (config: AdapterConfig) => {
    await pool.permit(url)
    const timeout = config.timeout && config.timeout > 0 ? config.timeout : pool.timeoutMs
    const response = await fetch(config.url ?? url, {
      method: (config.method ?? 'post').toUpperCase(),
      headers: headersOf(config),
      body: typeof config.data === 'string' ? config.data : JSON.stringify(config.data ?? {}),
      signal: AbortSignal.timeout(timeout),
    })
    const data = parsed(await response.text())
    if (response.status < 200 || response.status > 299) {
      throw new ToncenterHttpError(
        response.status,
        parseRetryAfter(response.headers.get('retry-after')),
        data
      )
    }
    return {
      data,
      status: response.status,
      statusText: response.statusText,
      headers: Object.fromEntries(response.headers.entries()),
      config,
      request: null,
    }
  }) as HttpAdapter
}
