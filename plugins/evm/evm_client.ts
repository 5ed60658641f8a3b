import { createPublicClient, http, type PublicClient } from 'viem'

/**
 * viem clients per RPC URL (kept per process: they hold no state that
 * matters between scans). Retries are off: the RpcPool fails over to the
 * next endpoint instead, and a timeout bounds every request. EVM providers
 * take their API key in the URL, so chain:set --rpc carries it.
 */
const clients = new Map<string, PublicClient>()

export function evmClient(url: string, timeoutMs: number): PublicClient {
  const key = `${url}|${timeoutMs}`
  let client = clients.get(key)
  if (!client) {
    client = createPublicClient({
      // viem caches eth_blockNumber for 4 s by default: a scan needs the head now.
      cacheTime: 0,
      transport: http(url, {
        timeout: timeoutMs,
        retryCount: 0,
        // Block reads of a range go out as JSON-RPC batches.
        batch: { batchSize: 50, wait: 0 },
      }),
    }) as PublicClient
    clients.set(key, client)
  }
  return client
}
