import { createPublicClient, http, type PublicClient } from 'viem'
import type { RpcPool } from '#chains/rpc_pool'
import { classifyEvmError } from '#plugins/evm/evm_errors'

/**
 * viem clients per pool and URL. Each HTTP request viem sends goes through
 * the pool's `fetch`: it waits for the endpoint's budget (a JSON-RPC batch
 * counts as the calls it carries: providers bill and limit per call) and
 * turns a non-2xx answer into RpcHttpError, so that the pool tells a rate
 * limit from an outage. Retries are off in viem: the pool retries limits
 * and server errors and fails over. A timeout bounds every request. EVM
 * providers take their API key in the URL, so chain:set --rpc carries it.
 * A pool lives for one scan or verification: its clients go with it.
 */
const clients = new WeakMap<RpcPool, Map<string, PublicClient>>()

/** Calls in a JSON-RPC body: a batch counts each. */
function callsIn(body: unknown): number {
  if (typeof body !== 'string' || !body.startsWith('[')) return 1
  try {
    const parsed: unknown = JSON.parse(body)
    return Array.isArray(parsed) ? Math.max(1, parsed.length) : 1
  } catch {
    return 1
  }
}

const MAX_BATCH = 50

/**
 * Some gateways answer a whole JSON-RPC batch with one error object (a
 * refused key, a rate limit) instead of one answer per call: viem then
 * fails on reading the missing answers ("Cannot read properties of
 * undefined"). Each call of the batch gets that error instead, so that it
 * reads as the endpoint meant it (evm_errors.ts: a rate limit is still one).
 */
async function answerPerCall(body: unknown, response: Response): Promise<Response> {
  if (typeof body !== 'string' || !body.startsWith('[')) return response
  const text = await response.text()
  const rebuilt = (payload: string) =>
    new Response(payload, {
      status: response.status,
      statusText: response.statusText,
      headers: { 'content-type': 'application/json' },
    })
  if (!text.trimStart().startsWith('{')) return rebuilt(text)
  try {
    const answer = JSON.parse(text) as { error?: unknown }
    const calls = JSON.parse(body) as { id?: unknown }[]
    if (answer.error === undefined || !Array.isArray(calls)) return rebuilt(text)
    return rebuilt(
      JSON.stringify(calls.map((call) => ({ jsonrpc: '2.0', id: call.id, error: answer.error })))
    )
  } catch {
    return rebuilt(text)
  }
}

function batchSizeFor(rpc: RpcPool, url: string) {
  const perSecond = rpc.budget(url)?.perSecond
  return perSecond && Number.isFinite(perSecond)
    ? Math.max(1, Math.min(MAX_BATCH, Math.floor(perSecond / 2)))
    : MAX_BATCH
}

export function evmClient(rpc: RpcPool, url: string): PublicClient {
  let byUrl = clients.get(rpc)
  if (!byUrl) {
    byUrl = new Map()
    clients.set(rpc, byUrl)
  }
  let client = byUrl.get(url)
  if (!client) {
    client = createPublicClient({
      // viem caches eth_blockNumber for 4 s by default: a scan needs the head now.
      cacheTime: 0,
      transport: http(url, {
        timeout: rpc.timeoutMs,
        retryCount: 0,
        // Block reads of a range go out as JSON-RPC batches, no larger than
        // half of what the endpoint takes in a second: a batch as large as
        // the provider's whole bucket is refused as soon as a request
        // before it arrives a little late.
        batch: { batchSize: batchSizeFor(rpc, url), wait: 0 },
        fetchFn: async (input, init) =>
          answerPerCall(
            init?.body,
            await rpc.fetch(
              url,
              init ?? {},
              input instanceof Request ? input.url : input,
              callsIn(init?.body)
            )
          ),
      }),
    }) as PublicClient
    byUrl.set(url, client)
  }
  return client
}

/**
 * One call through the chain's pool with the endpoint's client. viem wraps
 * what the fetch threw (HttpRequestError, its cause ours) and reports the
 * JSON-RPC errors of HTTP 200 answers as its own classes: the pool must see
 * what the endpoint meant (a rate limit, a refused range, a block it does
 * not have) to act on it (evm_errors.ts). The work is also given the URL
 * it runs against (an endpoint's learned log range).
 */
export function evmCall(rpc: RpcPool) {
  return <T>(work: (client: PublicClient, url: string) => Promise<T>): Promise<T> =>
    rpc.call(async (url) => {
      try {
        return await work(evmClient(rpc, url), url)
      } catch (error) {
        throw classifyEvmError(error)
      }
    })
}
