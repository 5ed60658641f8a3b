import {
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  createDefaultRpcTransport,
  createSolanaRpcFromTransport,
  isSolanaError,
  type RpcTransport,
} from '@solana/kit'
import { RpcHttpError, parseRetryAfter, type RpcPool } from '#chains/rpc_pool'

export type KitRpc = ReturnType<typeof createSolanaRpcFromTransport<RpcTransport>>

/**
 * A @solana/kit client for one endpoint of the pool whose every HTTP
 * request first waits for the pool's permit (the endpoint's budget), and
 * whose non-2xx answers become RpcHttpError with the status and
 * Retry-After, so the pool tells a rate limit (429: wait) from an outage.
 * The public endpoint answers 429 with a JSON-RPC error body; kit would
 * turn it into a SolanaError without the header, so the status and the
 * header are read from kit's error context here.
 */
export function kitClient(pool: RpcPool, url: string): KitRpc {
  const inner = createDefaultRpcTransport({ url })
  const transport = (async (config: Parameters<RpcTransport>[0]) => {
    await pool.permit(url)
    try {
      return await inner(config)
    } catch (error) {
      if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
        const { statusCode, message, headers } = error.context
        throw new RpcHttpError(
          `HTTP ${statusCode}${message ? ` ${message}` : ''}`,
          statusCode,
          parseRetryAfter(headers?.get?.('retry-after')),
          { cause: error }
        )
      }
      throw error
    }
  }) as RpcTransport
  return createSolanaRpcFromTransport(transport)
}
