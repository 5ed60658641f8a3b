import { getAddress, type Hash } from 'viem'
import type Token from '#models/token'
import type { ObservedTransfer, ScanContext } from '#chains/chain_family'
import { fromBaseUnits } from '#support/text/money'
import { tokenOfContract } from '#plugins/evm/erc20_transfers'
import {
  BLOCK_BATCH,
  logKey,
  readBlocks,
  readReceipts,
  readTransferLog,
  transactionLogPositions,
  transferLogs,
  type Call,
  type RawBlock,
  type TransferEvent,
} from '#plugins/evm/evm_reads'
import { evmOptions } from '#plugins/evm/evm_options'

/** A block of the unconfirmed window, reduced to what sightings need. */
type WindowBlock = {
  number: bigint
  hash: Hash
  parentHash: Hash
  timestamp: number
  /** Native transfers to watched addresses; `ok` is the receipt's verdict once read. */
  payments: { hash: Hash; to: string; value: bigint; ok?: boolean }[]
}

/** Per network: the window's blocks kept between runs, valid for one set of watched addresses. */
type Window = { watched: string; blocks: Map<bigint, WindowBlock> }

const windows = new Map<string, Window>()

/** Block times by block hash (a hash never changes its time), bounded. */
const blockTimes = new Map<string, number>()
const BLOCK_TIMES_KEPT = 2048

/**
 * Transfers to the watched addresses in the blocks above the confirmed
 * scan (safe + 1 … head, at most `maxBlocksPerScan` of them), for the
 * payer's "payment seen" state. Extra RPC cost per run:
 * - tokens: one eth_getLogs over the window, plus one block header per
 *   block holding such a transfer the first time it is seen;
 * - native coin: each block of the window is read with its transactions
 *   once (kept between runs, chained by parent hash: a reorganisation
 *   breaks the chain and the window is read again), plus the head every
 *   run, plus one receipt per transfer to a watched address.
 */
export async function unconfirmedEvm(
  call: Call,
  context: ScanContext,
  safe: bigint,
  head: bigint
): Promise<ObservedTransfer[] | undefined> {
  let from = safe + 1n
  const bound = BigInt(Math.max(1, context.maxBlocksPerScan))
  if (head - from + 1n > bound) from = head - bound + 1n
  if (from < 0n) from = 0n
  if (from > head) return []

  const watched = new Set(context.addresses)
  const found: ObservedTransfer[] = []
  const depth = (number: bigint) => Number(head - number + 1n)

  const contracts = context.tokens.filter((token) => token.contract !== null)
  if (contracts.length > 0) {
    const logs = await transferLogs(
      context.rpc,
      call,
      contracts,
      context.addresses,
      from,
      head,
      evmOptions(context.chain).blockRange
    )
    const events = logs
      .map((log) => readTransferLog(log))
      .filter(
        (event): event is TransferEvent =>
          event !== null && watched.has(event.to) && !!tokenOfContract(contracts, event.contract)
      )
    const positions = await transactionLogPositions(call, events)
    for (const event of events) {
      const token = tokenOfContract(contracts, event.contract)!
      found.push({
        reference: event.transactionHash,
        position: positions.get(logKey(event))!,
        to: event.to,
        contract: token.contract,
        amount: fromBaseUnits(event.value, token.decimals),
        timestamp: await blockTime(call, event.blockHash),
        confirmations: depth(event.blockNumber),
        success: true,
      })
    }
  }

  const native = context.tokens.find((token) => token.contract === null)
  if (native) {
    const blocks = await nativeWindow(call, context.chain.network, watched, from, head)
    if (!blocks) return undefined
    for (const block of blocks) {
      for (const payment of block.payments) {
        if (payment.ok === undefined) {
          const receipts = await readReceipts(call, [payment.hash])
          const receipt = receipts.get(payment.hash)!
          payment.ok = BigInt(receipt.status) === 1n
        }
        if (!payment.ok) continue
        found.push(nativeTransfer(native, payment, block.timestamp, depth(block.number)))
      }
    }
  }
  return found
}

function nativeTransfer(
  native: Token,
  payment: WindowBlock['payments'][number],
  timestamp: number,
  confirmations: number
) {
  return {
    reference: payment.hash.toLowerCase(),
    position: 'value',
    to: payment.to,
    contract: null,
    amount: fromBaseUnits(payment.value, native.decimals),
    timestamp,
    confirmations,
    success: true,
  }
}

async function blockTime(call: Call, hash: Hash): Promise<number> {
  let time = blockTimes.get(hash)
  if (time === undefined) {
    const block = await call((client) =>
      client.request({ method: 'eth_getBlockByHash', params: [hash, false] })
    )
    if (!block) throw new Error(`the node does not have block ${hash}`)
    time = Number(BigInt(block.timestamp)) * 1000
    if (blockTimes.size >= BLOCK_TIMES_KEPT) blockTimes.delete(blockTimes.keys().next().value!)
    blockTimes.set(hash, time)
  }
  return time
}

/**
 * The window's blocks from `from` to `head`: those not kept from an
 * earlier run, and the head itself (a same-height reorganisation changes
 * it), are read; the rest must chain to the head by parent hash, or the
 * whole window is read again. Null when it does not chain even then (the
 * chain moved while it was read): this run reports nothing unconfirmed.
 */
async function nativeWindow(
  call: Call,
  network: string,
  watched: Set<string>,
  from: bigint,
  head: bigint
): Promise<WindowBlock[] | null> {
  const key = [...watched].sort().join(',')
  let window = windows.get(network)
  if (!window || window.watched !== key) {
    window = { watched: key, blocks: new Map() }
    windows.set(network, window)
  }
  for (const number of window.blocks.keys())
    if (number < from || number > head) window.blocks.delete(number)

  for (let attempt = 0; attempt < 2; attempt++) {
    const missing: bigint[] = []
    for (let number = from; number <= head; number++)
      if (!window.blocks.has(number) || number === head) missing.push(number)
    await readWindowBlocks(call, window, watched, missing)
    if (chained(window, from, head))
      return [...window.blocks.values()].sort((a, b) => (a.number < b.number ? -1 : 1))
    window.blocks.clear()
  }
  windows.delete(network)
  return null
}

function chained(window: Window, from: bigint, head: bigint) {
  for (let number = head; number > from; number--) {
    const block = window.blocks.get(number)
    const parent = window.blocks.get(number - 1n)
    if (!block || !parent || block.parentHash !== parent.hash) return false
  }
  return window.blocks.has(from)
}

async function readWindowBlocks(
  call: Call,
  window: Window,
  watched: Set<string>,
  numbers: bigint[]
) {
  for (let start = 0; start < numbers.length; start += BLOCK_BATCH) {
    const fetched = await readBlocks(call, numbers.slice(start, start + BLOCK_BATCH), true)
    for (const [number, block] of fetched) window.blocks.set(number, windowBlock(block, watched))
  }
}

function windowBlock(block: RawBlock, watched: Set<string>): WindowBlock {
  const payments: WindowBlock['payments'] = []
  for (const tx of block.transactions) {
    if (typeof tx === 'string' || !tx.to || BigInt(tx.value) === 0n) continue
    const to = getAddress(tx.to)
    if (watched.has(to))
      payments.push({ hash: tx.hash.toLowerCase() as Hash, to, value: BigInt(tx.value) })
  }
  return {
    number: BigInt(block.number),
    hash: block.hash.toLowerCase() as Hash,
    parentHash: block.parentHash.toLowerCase() as Hash,
    timestamp: Number(BigInt(block.timestamp)) * 1000,
    payments,
  }
}
