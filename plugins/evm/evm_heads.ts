import { createPublicClient, webSocket } from 'viem'
import type Chain from '#models/chain'
import type { HeadHandlers, HeadWatch } from '#chains/chain_family'

/** Longest wait for the WebSocket to open. */
const OPEN_TIMEOUT_MS = 10_000

/**
 * New heads of an EVM chain over its WebSocket endpoint (`chain.wsUrl`):
 * viem's watchBlockNumber on a webSocket transport, i.e. `eth_subscribe`
 * `newHeads`. Resolves once the socket is open; a refused subscription, a
 * closed socket or a socket error is reported once through `onError` and
 * ends the watch (viem's own reconnection is off: the core reopens the
 * watch with its backoff and polls meanwhile). stop() unsubscribes and
 * closes the socket.
 */
export async function watchEvmHeads(chain: Chain, handlers: HeadHandlers): Promise<HeadWatch> {
  const url = chain.wsUrl
  if (!url) throw new Error(`${chain.network} has no WebSocket endpoint`)
  const transport = webSocket(url, { reconnect: false, retryCount: 0, timeout: OPEN_TIMEOUT_MS })
  const client = createPublicClient({ transport })

  let stopped = false
  let unwatch: (() => void) | null = null
  const closeSocket = () => {
    void client.transport
      .getRpcClient()
      .then((socket) => socket.close())
      .catch(() => {})
  }
  const stop = () => {
    if (stopped) return
    stopped = true
    try {
      unwatch?.()
    } catch {
      // The subscription died with its socket.
    }
    closeSocket()
  }

  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      client.transport.getRpcClient(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the WebSocket did not open within ${OPEN_TIMEOUT_MS / 1000} s`)),
          OPEN_TIMEOUT_MS
        )
      }),
    ])
  } catch (error) {
    stop()
    throw error
  } finally {
    clearTimeout(timer)
  }

  // A webSocket transport subscribes (eth_subscribe newHeads) rather than polls.
  unwatch = client.watchBlockNumber({
    onBlockNumber: (number) => {
      if (!stopped) handlers.onHead(number.toString())
    },
    onError: (error) => {
      if (stopped) return
      stop()
      handlers.onError(error)
    },
  })
  return { stop }
}
