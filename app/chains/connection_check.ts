import type Chain from '#models/chain'
import type { ChainFamily, ChainHead } from '#chains/chain_family'
import { rpcFor } from '#chains/chain_rpc'
import {
  RpcBudgetExhaustedError,
  RpcHttpError,
  RpcUnavailableError,
  type RpcPool,
} from '#chains/rpc_pool'
import { redactUrl } from '#support/http/redaction'

/** What one endpoint answered when asked for the head. */
export type EndpointTest = {
  /** The endpoint, its credentials masked. */
  url: string
  ok: boolean
  head: ChainHead | null
  /** Time until the answer (or the failure), in milliseconds. */
  latencyMs: number
  /** Why it failed, in plain words (secrets masked); null when it answered. */
  error: string | null
  /**
   * The family option the answer contradicts (e.g. a chain id) when the
   * endpoint answered for another network; null otherwise.
   */
  mismatch: string | null
}

export type ConnectionTest = {
  network: string
  /** True when every endpoint answered. */
  ok: boolean
  endpoints: EndpointTest[]
}

/** Network error codes of Node and undici, as an operator reads them. */
const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is the node running, is the port right?)',
  ENOTFOUND: 'host not found (DNS)',
  EAI_AGAIN: 'host not found (DNS did not answer)',
  ECONNRESET: 'the connection was reset by the server',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'the connection was closed by the server',
  UND_ERR_SOCKET: 'the connection was closed by the server',
  CERT_HAS_EXPIRED: 'TLS: the certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS: the certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS: a certificate of the chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS: the certificate cannot be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS: the certificate is for another host',
  ERR_SSL_WRONG_VERSION_NUMBER: 'TLS: the endpoint does not speak https on that port',
}

const TIMEOUT_NAMES = new Set(['TimeoutError', 'AbortError'])
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
])

/** Each error of a cause chain, outermost first (bounded: causes may loop). */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = []
  for (
    let current: unknown = error;
    current !== undefined && current !== null && chain.length < 10;
  ) {
    chain.push(current)
    current = current instanceof Error ? current.cause : undefined
  }
  return chain
}

function firstLine(text: string) {
  return (
    text
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? text
  )
}

/**
 * A failure as an operator reads it: what went wrong, not the client
 * library's wrapping. Secrets of the pool are masked.
 */
export function describeRpcFailure(error: unknown, timeoutMs: number, rpc: RpcPool): string {
  const chain = causes(error)
  const timeout = `no answer within ${timeoutMs / 1000} s`
  for (const item of chain) {
    if (item instanceof RpcBudgetExhaustedError) return rpc.redact(item.message)
  }
  for (const item of chain) {
    if (item instanceof RpcHttpError) {
      const hint =
        item.status === 401 || item.status === 403
          ? ' (refused: is the API key right?)'
          : item.status === 429
            ? ' (rate limited: the provider asks to slow down)'
            : item.status === 404
              ? ' (not found: is the path of the URL right?)'
              : ''
      return rpc.redact(`${firstLine(item.message)}${hint}`)
    }
  }
  // A web page or a proxy's message where JSON-RPC answers were expected.
  if (chain.some((item) => item instanceof SyntaxError))
    return 'the answer is not JSON (is this URL the node’s JSON-RPC endpoint?)'
  for (const item of chain) {
    const record = item as { name?: unknown; code?: unknown; status?: unknown }
    if (typeof record.name === 'string' && TIMEOUT_NAMES.has(record.name)) return timeout
    if (typeof record.code === 'string' && TIMEOUT_CODES.has(record.code)) return timeout
    if (typeof record.code === 'string' && NETWORK_CODES[record.code])
      return NETWORK_CODES[record.code]
    // HTTP errors of client libraries that do their own HTTP (a family plugin's chain SDK).
    if (typeof record.status === 'number' && record.status >= 400) return `HTTP ${record.status}`
  }
  // The innermost message that says something (viem's shortMessage first,
  // with the endpoint's own words: a JSON-RPC error's message is its details).
  for (const item of chain.reverse()) {
    if (item instanceof RpcUnavailableError) continue
    const short = (item as { shortMessage?: unknown }).shortMessage
    const details = (item as { details?: unknown }).details
    if (typeof short === 'string' && short.trim() !== '' && short !== 'HTTP request failed.') {
      const said =
        typeof details === 'string' && details.trim() !== '' && !short.includes(details.trim())
          ? `${firstLine(short).replace(/\.$/, '')}: ${firstLine(details)}`
          : firstLine(short)
      return rpc.redact(said)
    }
    if (item instanceof Error && item.message.trim() !== '' && item.message !== 'fetch failed') {
      return rpc.redact(firstLine(item.message))
    }
  }
  return rpc.redact(firstLine(error instanceof Error ? error.message : String(error)))
}

class Deadline extends Error {}

/**
 * Asks one endpoint for the head, then (when the family can tell) whether
 * it serves the chain's network, within `timeoutMs` in all (the family may
 * send more than one request).
 */
async function testEndpoint(
  chain: Chain,
  family: ChainFamily,
  url: string,
  timeoutMs: number,
  remember: boolean
): Promise<EndpointTest> {
  const rpc = await rpcFor(chain, { urls: [url], timeoutMs, retries: 0, remember })
  const started = performance.now()
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Deadline()), timeoutMs)
  })
  const ask = async () => {
    const head = await family.head!(rpc, chain)
    return { head, mismatch: family.checkEndpoint ? await family.checkEndpoint(rpc, chain) : null }
  }
  try {
    const { head, mismatch } = await Promise.race([ask(), deadline])
    return {
      url: redactUrl(url),
      ok: mismatch === null,
      head,
      latencyMs: Math.round(performance.now() - started),
      error: mismatch ? rpc.redact(mismatch.message) : null,
      mismatch: mismatch?.option ?? null,
    }
  } catch (error) {
    const latencyMs = Math.round(performance.now() - started)
    const message =
      error instanceof Deadline
        ? `no answer within ${timeoutMs / 1000} s`
        : describeRpcFailure(error, timeoutMs, rpc)
    return { url: redactUrl(url), ok: false, head: null, latencyMs, error: message, mismatch: null }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Asks every RPC endpoint of the chain for its head, in parallel, each
 * with its own budget and no retry: what the scanner would meet now, and
 * whether each serves the chain's network (ChainFamily.checkEndpoint).
 * The family must be able to report a head (ChainFamily.head).
 * `remember: false` (a network not saved yet) keeps no endpoint state.
 */
export async function testChainConnection(
  chain: Chain,
  family: ChainFamily,
  timeoutMs: number,
  options: { remember?: boolean } = {}
): Promise<ConnectionTest> {
  const endpoints = await Promise.all(
    chain.rpcUrls.map((url) =>
      testEndpoint(chain, family, url, timeoutMs, options.remember ?? true)
    )
  )
  return { network: chain.network, ok: endpoints.every((endpoint) => endpoint.ok), endpoints }
}
