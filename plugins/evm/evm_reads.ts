import { getAddress, toHex, type Hex, type PublicClient } from 'viem'
import type Token from '#models/token'
import type { RpcPool } from '#chains/rpc_pool'
import { classifyEvmError, LogRangeRefusedError, MissingBlockError } from '#plugins/evm/evm_errors'
import { addressTopic } from '#plugins/evm/evm_bloom'

/**
 * Raw JSON-RPC reads shared by the confirmed scan (evm_scan.ts), its
 * consistency checks (evm_segment.ts) and the unconfirmed window
 * (evm_unconfirmed.ts). Raw, not viem's actions: a node that does not have
 * a block answers `null`, which must stay an answer ("not yet"), not become
 * an outage.
 */

/** Blocks read per JSON-RPC batch. */
export const BLOCK_BATCH = 50

/** keccak256("Transfer(address,address,uint256)"). */
export const TRANSFER_TOPIC: Hex =
  '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'

/** One RPC call through the chain's failover pool; the work learns the endpoint it runs on. */
export type Call = <T>(work: (client: PublicClient, url: string) => Promise<T>) => Promise<T>

export type RawTransaction = { hash: Hex; to: Hex | null; value: Hex; blockHash: Hex | null }

/** A block as eth_getBlockByNumber answers it (transactions: hashes, or objects when asked for). */
export type RawBlock = {
  number: Hex
  hash: Hex
  parentHash: Hex
  timestamp: Hex
  logsBloom: Hex
  transactions: (Hex | RawTransaction)[]
}

export type RawLog = {
  address: Hex
  topics: Hex[]
  data: Hex
  blockNumber: Hex
  blockHash: Hex
  transactionHash: Hex
  logIndex: Hex
  removed?: boolean
}

export type RawReceipt = {
  transactionHash: Hex
  blockHash: Hex
  blockNumber: Hex
  status: Hex
  logs: RawLog[]
}

/** A Transfer log read: recipient (EIP-55), value, where it is. */
export type TransferEvent = {
  contract: string
  to: string
  value: bigint
  blockNumber: bigint
  blockHash: Hex
  transactionHash: Hex
  logIndex: number
}

function request<T>(client: PublicClient, method: string, params: unknown[]): Promise<T> {
  return client.request({ method: method as any, params: params as any }) as Promise<T>
}

/**
 * The blocks `numbers` (with their transactions when `full`), in JSON-RPC
 * batches. A block the node answers `null` for (it is behind: a lagging
 * node of a load-balanced endpoint) is MissingBlockError: asked again, never
 * skipped.
 */
export async function readBlocks(
  call: Call,
  numbers: bigint[],
  full: boolean
): Promise<Map<bigint, RawBlock>> {
  const blocks = new Map<bigint, RawBlock>()
  for (let start = 0; start < numbers.length; start += BLOCK_BATCH) {
    const batch = numbers.slice(start, start + BLOCK_BATCH)
    const answers = await call((client) =>
      Promise.all(
        batch.map((number) =>
          request<RawBlock | null>(client, 'eth_getBlockByNumber', [toHex(number), full])
        )
      )
    )
    answers.forEach((block, index) => {
      if (!block || !block.hash)
        throw new MissingBlockError(
          `the node does not have block ${batch[index]} yet`,
          batch[index]
        )
      if (BigInt(block.number) !== batch[index]) {
        throw new MissingBlockError(
          `the node answered block ${BigInt(block.number)} for block ${batch[index]}`,
          batch[index]
        )
      }
      blocks.set(batch[index], block)
    })
  }
  return blocks
}

/** The head as an endpoint reports it. */
export async function readHead(call: Call): Promise<bigint> {
  return BigInt(await call((client) => request<Hex>(client, 'eth_blockNumber', [])))
}

function transferFilter(tokens: Token[], addresses: string[]) {
  return {
    address: tokens.map((token) => (token.contract as string).toLowerCase()),
    topics: [TRANSFER_TOPIC, null, addresses.map((address) => addressTopic(address as Hex))],
  }
}

/** A log as a Transfer to a watched address, or null (another event, an ERC-721 Transfer: four topics). */
export function readTransferLog(log: RawLog): TransferEvent | null {
  if (log.topics.length !== 3 || log.topics[0].toLowerCase() !== TRANSFER_TOPIC) return null
  let value: bigint
  try {
    value = BigInt(log.data === '0x' ? 0 : log.data)
  } catch {
    return null
  }
  return {
    contract: getAddress(log.address),
    to: getAddress(`0x${log.topics[2].slice(-40)}`),
    value,
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash.toLowerCase() as Hex,
    transactionHash: log.transactionHash.toLowerCase() as Hex,
    logIndex: Number(BigInt(log.logIndex)),
  }
}

/**
 * Transfer logs of the token contracts to the addresses in from…to.
 * Ranges go out as wide as the endpoint takes: the chain's `blockRange`,
 * or narrower once the endpoint refused it (learned per endpoint, kept for
 * the next runs and other processes: RpcPool.rememberLogRange). A refusal
 * (LogRangeRefusedError: HTTP 400/413 or 200, Alchemy's suggested range,
 * a result cap) narrows the range to the suggestion or halves it and asks
 * again, on the same endpoint. A single block refused cannot be narrowed:
 * that error goes to the caller.
 */
export async function transferLogs(
  rpc: RpcPool,
  call: Call,
  tokens: Token[],
  addresses: string[],
  from: bigint,
  to: bigint,
  blockRange: number
): Promise<RawLog[]> {
  if (tokens.length === 0 || addresses.length === 0 || from > to) return []
  const logs: RawLog[] = []
  const filter = transferFilter(tokens, addresses)
  let start = from
  while (start <= to) {
    const part = await call(async (client, url) => {
      let width = BigInt(Math.min(blockRange, rpc.logRange(url) ?? blockRange))
      for (;;) {
        const end = min(to, start + width - 1n)
        try {
          const found = await request<RawLog[]>(client, 'eth_getLogs', [
            { ...filter, fromBlock: toHex(start), toBlock: toHex(end) },
          ])
          return { logs: found ?? [], end }
        } catch (raw) {
          const error = classifyEvmError(raw)
          if (!(error instanceof LogRangeRefusedError)) throw error
          const asked = end - start + 1n
          if (asked <= 1n) throw error
          const suggested =
            error.width !== null && BigInt(error.width) < asked
              ? BigInt(error.width)
              : (asked + 1n) / 2n
          width = suggested < 1n ? 1n : suggested
          rpc.rememberLogRange(url, Number(width))
        }
      }
    })
    logs.push(...part.logs)
    start = part.end + 1n
  }
  return logs
}

/**
 * The Transfer logs of one block, asked by its hash (EIP-234): a node that
 * does not have that very block answers an error ("unknown block"), never
 * an empty list, so an empty answer here is true.
 */
export async function transferLogsOfBlock(
  call: Call,
  tokens: Token[],
  addresses: string[],
  blockHash: Hex
): Promise<RawLog[]> {
  const filter = transferFilter(tokens, addresses)
  return (
    (await call((client) =>
      request<RawLog[]>(client, 'eth_getLogs', [{ ...filter, blockHash }])
    )) ?? []
  )
}

/**
 * The position of each Transfer log in its own transaction (`log:<n>`: its
 * rank among the receipt's logs), by transaction hash and block-level log
 * index. A log's `logIndex` counts within its block: a transaction a
 * reorganisation includes again elsewhere keeps its own ranks, not its
 * block's, and so its payments stay the same transfers. One receipt per
 * transaction (batched); each must be of the block the log was read from.
 */
export async function transactionLogPositions(
  call: Call,
  events: TransferEvent[]
): Promise<Map<string, string>> {
  const hashes = [...new Set(events.map((event) => event.transactionHash))]
  const receipts = await readReceipts(call, hashes)
  const positions = new Map<string, string>()
  for (const event of events) {
    const receipt = receipts.get(event.transactionHash)!
    if (receipt.blockHash.toLowerCase() !== event.blockHash) {
      throw new MissingBlockError(
        `the receipt of ${event.transactionHash} is of block ${receipt.blockHash}, its log of ${event.blockHash}`
      )
    }
    const rank = receipt.logs.findIndex((log) => BigInt(log.logIndex) === BigInt(event.logIndex))
    if (rank === -1)
      throw new MissingBlockError(
        `the receipt of ${event.transactionHash} lacks its log ${event.logIndex}`
      )
    positions.set(logKey(event), `log:${rank}`)
  }
  return positions
}

/** A log's key within its block: transaction and block-level log index. */
export function logKey(event: { transactionHash: string; logIndex: number }): string {
  return `${event.transactionHash}:${event.logIndex}`
}

/** Receipts by transaction hash (batched); a `null` one is MissingBlockError. */
export async function readReceipts(call: Call, hashes: Hex[]): Promise<Map<Hex, RawReceipt>> {
  const receipts = new Map<Hex, RawReceipt>()
  for (let start = 0; start < hashes.length; start += BLOCK_BATCH) {
    const batch = hashes.slice(start, start + BLOCK_BATCH)
    const answers = await call((client) =>
      Promise.all(
        batch.map((hash) => request<RawReceipt | null>(client, 'eth_getTransactionReceipt', [hash]))
      )
    )
    answers.forEach((receipt, index) => {
      if (!receipt) throw new MissingBlockError(`the node has no receipt of ${batch[index]} yet`)
      receipts.set(batch[index], receipt)
    })
  }
  return receipts
}

export function min(a: bigint, b: bigint) {
  return a < b ? a : b
}
