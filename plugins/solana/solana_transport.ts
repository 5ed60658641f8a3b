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
      const answer = await inner(config)
      // some providers limit with HTTP 200 and the JSON-RPC error code 429
      const error = (answer as { error?: { code?: unknown; message?: unknown } } | null)?.error
      if (error && Number(error.code) === 429) {
        throw new RpcHttpError(`JSON-RPC 429 ${String(error.message ?? '')}`.trim(), 429, null)
      }
      return answer
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
