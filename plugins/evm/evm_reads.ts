import type { PublicClient } from 'viem'
import type Token from '#models/token'
import { RpcBudgetExhaustedError, RpcHttpError } from '#chains/rpc_pool'
import { TRANSFER_EVENT, type TransferLog } from '#plugins/evm/erc20_transfers'

/** Reads shared by the confirmed scan (evm_scan.ts) and the unconfirmed window (evm_unconfirmed.ts). */

/** Blocks fetched per JSON-RPC batch when looking for native transfers. */
export const BLOCK_BATCH = 50

/** Node answers meaning "ask for a smaller range", not "I am down". */
const RANGE_REFUSED = /range|limit|too many|too large|exceed|10000|results|timeout|timed out/i

/** One RPC call through the chain's failover pool. */
export type Call = <T>(work: (client: PublicClient) => Promise<T>) => Promise<T>

function min(a: bigint, b: bigint) {
  return a < b ? a : b
}

/**
 * Transfer events of the token contracts to the addresses in from…to,
 * `range` blocks per eth_getLogs call; a range the node refuses is split
 * in two until accepted.
 */
export async function tokenLogs(
  call: Call,
  tokens: Token[],
  addresses: string[],
  from: bigint,
  to: bigint,
  range: bigint
): Promise<TransferLog[]> {
  const logs: TransferLog[] = []
  for (let start = from; start <= to; start += range) {
    const end = min(to, start + range - 1n)
    logs.push(...(await logsSplitting(call, tokens, addresses, start, end)))
  }
  return logs
}

async function logsSplitting(
  call: Call,
  tokens: Token[],
  addresses: string[],
  from: bigint,
  to: bigint
): Promise<TransferLog[]> {
  try {
    return (await call((client) =>
      client.getLogs({
        address: tokens.map((token) => token.contract as `0x${string}`),
        event: TRANSFER_EVENT,
        args: { to: addresses as `0x${string}`[] },
        fromBlock: from,
        toBlock: to,
        strict: true,
      })
    )) as TransferLog[]
  } catch (error) {
    // A rate limit ("Too Many Requests") or a spent budget is not a range the node refuses.
    const cause = (error as { cause?: unknown }).cause
    if (cause instanceof RpcHttpError || cause instanceof RpcBudgetExhaustedError) throw error
    const text = `${(error as Error).message} ${String((error as { cause?: Error }).cause?.message ?? '')}`
    if (from === to || !RANGE_REFUSED.test(text)) throw error
    const middle = (from + to) / 2n
    return [
      ...(await logsSplitting(call, tokens, addresses, from, middle)),
      ...(await logsSplitting(call, tokens, addresses, middle + 1n, to)),
    ]
  }
}
