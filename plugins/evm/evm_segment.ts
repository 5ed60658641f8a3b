import { getAddress, type Hex } from 'viem'
import type Token from '#models/token'
import type { ObservedTransfer, ScanContext, SeenAmount } from '#chains/chain_family'
import { fromBaseUnits } from '#support/text/money'
import { tokenOfContract } from '#plugins/evm/erc20_transfers'
import { BloomQuery } from '#plugins/evm/evm_bloom'
import { internalTransfers } from '#plugins/evm/evm_traces'
import type { TraceMode } from '#plugins/evm/evm_options'
import {
  logKey,
  readBlocks,
  readReceipts,
  readTransferLog,
  transactionLogPositions,
  transferLogs,
  transferLogsOfBlock,
  TRANSFER_TOPIC,
  type Call,
  type RawBlock,
  type RawLog,
  type RawTransaction,
  type TransferEvent,
} from '#plugins/evm/evm_reads'

/**
 * The answers for a segment do not hold together: blocks that do not chain,
 * a log or receipt of a block other than the one read at its height. Two
 * nodes behind one URL (or two URLs) answered from different moments or
 * forks. Asked again; the segment is never passed over.
 */
export class InconsistentAnswerError extends Error {}

/**
 * The segment's first block does not follow the block the scan stands on:
 * a reorganisation, or a node on another fork answered. Asked again like
 * any answer that does not hold together, except right after the cursor,
 * where the scan first looks whether the cursor's block was replaced.
 */
export class ParentMismatchError extends InconsistentAnswerError {
  constructor(
    readonly expected: Hex,
    readonly found: Hex
  ) {
    super(`the first block's parent is ${found}, the scan stands on ${expected}`)
  }
}

/** What a segment holds for the watched addresses, read consistently. */
export type SegmentReading = {
  transfers: ObservedTransfer[]
  /** Every incoming amount seen (transfers and dust), for the balance watch. */
  seen: SeenAmount[]
  dust: number
  /** The segment's blocks by height, oldest first: their hashes become the cursor's recent hashes. */
  hashes: { number: bigint; hash: Hex }[]
  /** Blocks with a bloom hit the range answer held no log for, asked again by hash. */
  rechecked: number
  /** Logs the range answer lacked and the by-hash answer had (a short answer caught). */
  recovered: number
}

export type SegmentContext = {
  context: ScanContext
  call: Call
  head: bigint
  blockRange: number
  traces: TraceMode
  /** Set false for the rest of the run once the endpoint offers no traces. */
  tracesOffered: { value: boolean }
}

const hex = (value: string) => value.toLowerCase() as Hex

/**
 * Reads blocks start…end and everything paid to the watched addresses in
 * them, and shows the answers consistent before anything is kept:
 * - every block of the segment is read (with its transactions when the
 *   native coin is watched): a block the node does not have is
 *   MissingBlockError; the blocks must chain (parent hashes), and the first
 *   must follow `parent` (the block the scan stands on) or
 *   ParentMismatchError is thrown;
 * - token transfers: eth_getLogs over the range; each log must carry the
 *   hash of the block read at its height (else another fork answered); and
 *   every block whose logsBloom may hold a watched Transfer but got no log
 *   is asked again by its hash (EIP-234), which a node without that very
 *   block refuses instead of answering `[]`: a lagging node's empty answer
 *   is caught, a bloom's false "maybe" costs one call;
 * - native coin: transactions to watched addresses with value, each
 *   receipt read (it must be of the same block), and, where the node offers
 *   traces, the value contracts sent to them.
 */
export async function readSegment(
  segment: SegmentContext,
  start: bigint,
  end: bigint,
  parent: Hex | null
): Promise<SegmentReading> {
  const { context, call, head } = segment
  const numbers: bigint[] = []
  for (let number = start; number <= end; number++) numbers.push(number)
  const native = context.tokens.find((token) => token.contract === null)
  const contracts = context.tokens.filter((token) => token.contract !== null)
  const watched = new Set(context.addresses)

  const blocks = await readBlocks(call, numbers, native !== undefined)
  let previous = parent
  for (const number of numbers) {
    const block = blocks.get(number)!
    if (previous !== null && hex(block.parentHash) !== hex(previous)) {
      if (number === start) throw new ParentMismatchError(hex(previous), hex(block.parentHash))
      throw new InconsistentAnswerError(
        `blocks ${number - 1n} and ${number} were read from different forks`
      )
    }
    previous = block.hash
  }

  const reading: SegmentReading = {
    transfers: [],
    seen: [],
    dust: 0,
    rechecked: 0,
    recovered: 0,
    hashes: [],
  }
  for (const number of numbers) reading.hashes.push({ number, hash: hex(blocks.get(number)!.hash) })

  const keep = (transfer: ObservedTransfer) => {
    reading.seen.push(seenOf(transfer))
    if (context.isDust?.(transfer.contract, transfer.amount)) {
      reading.dust++
      return
    }
    reading.transfers.push(transfer)
  }
  const base = (block: RawBlock) => ({
    timestamp: Number(BigInt(block.timestamp)) * 1000,
    confirmations: Number(head - BigInt(block.number) + 1n),
    success: true,
    block: { number: BigInt(block.number).toString(), hash: hex(block.hash) },
  })

  if (contracts.length > 0) {
    const events: { event: TransferEvent; token: Token }[] = []
    for (const log of await consistentLogs(segment, contracts, blocks, start, end, reading)) {
      const event = readTransferLog(log)
      if (!event || !watched.has(event.to)) continue
      const token = tokenOfContract(contracts, event.contract)
      if (token) events.push({ event, token })
    }
    // Dust is dropped before its receipt is read (address poisoning must cost no requests).
    const kept = events.filter(({ event, token }) => {
      const amount = fromBaseUnits(event.value, token.decimals)
      if (!context.isDust?.(token.contract, amount)) return true
      reading.dust++
      reading.seen.push({
        reference: event.transactionHash,
        position: `blocklog:${event.logIndex}`,
        to: event.to,
        contract: token.contract,
        amount,
        height: event.blockNumber.toString(),
      })
      return false
    })
    const positions = await transactionLogPositions(
      call,
      kept.map(({ event }) => event)
    )
    for (const { event, token } of kept) {
      keep({
        ...base(blocks.get(event.blockNumber)!),
        reference: event.transactionHash,
        position: positions.get(logKey(event))!,
        to: event.to,
        contract: token.contract,
        amount: fromBaseUnits(event.value, token.decimals),
      })
    }
  }

  if (native) {
    for (const transfer of await nativeTransfers(segment, native, blocks, numbers, watched))
      keep(transfer)
  }
  return reading
}

function seenOf(transfer: ObservedTransfer): SeenAmount {
  return {
    reference: transfer.reference,
    position: transfer.position,
    to: transfer.to,
    contract: transfer.contract,
    amount: transfer.amount,
    height: transfer.block!.number,
  }
}

/** The segment's Transfer logs to watched addresses, each shown to be of the block read at its height. */
async function consistentLogs(
  segment: SegmentContext,
  contracts: Token[],
  blocks: Map<bigint, RawBlock>,
  start: bigint,
  end: bigint,
  reading: SegmentReading
): Promise<RawLog[]> {
  const { context, call } = segment
  const logs = await transferLogs(
    context.rpc,
    call,
    contracts,
    context.addresses,
    start,
    end,
    segment.blockRange
  )
  const byBlock = new Map<bigint, RawLog[]>()
  for (const log of logs) {
    if (log.removed)
      throw new InconsistentAnswerError(
        `the node answered a removed log of block ${BigInt(log.blockNumber)}`
      )
    const number = BigInt(log.blockNumber)
    const block = blocks.get(number)
    if (!block)
      throw new InconsistentAnswerError(
        `the node answered a log of block ${number}, outside ${start}–${end}`
      )
    if (hex(log.blockHash) !== hex(block.hash)) {
      throw new InconsistentAnswerError(
        `a log of block ${number} is from another fork (${log.blockHash}, the block read is ${block.hash})`
      )
    }
    byBlock.set(number, [...(byBlock.get(number) ?? []), log])
  }

  const bloom = new BloomQuery(
    contracts.map((token) => token.contract as Hex),
    TRANSFER_TOPIC,
    context.addresses.map((address) => address as Hex)
  )
  const suspects = [...blocks.values()].filter(
    (block) => !byBlock.has(BigInt(block.number)) && bloom.mayHold(block.logsBloom)
  )
  reading.rechecked += suspects.length
  const RECHECK_BATCH = 20
  for (let index = 0; index < suspects.length; index += RECHECK_BATCH) {
    const batch = suspects.slice(index, index + RECHECK_BATCH)
    const answers = await Promise.all(
      batch.map((block) => transferLogsOfBlock(call, contracts, context.addresses, block.hash))
    )
    answers.forEach((found, position) => {
      const block = batch[position]
      const mine = found.filter((log) => !log.removed && hex(log.blockHash) === hex(block.hash))
      if (mine.length === 0) return // the bloom's "maybe" was a no
      reading.recovered += mine.length
      byBlock.set(BigInt(block.number), mine)
    })
  }
  return [...byBlock.values()].flat()
}

async function nativeTransfers(
  segment: SegmentContext,
  native: Token,
  blocks: Map<bigint, RawBlock>,
  numbers: bigint[],
  watched: Set<string>
): Promise<ObservedTransfer[]> {
  const { context, call, head } = segment
  const found: ObservedTransfer[] = []
  const base = (block: RawBlock) => ({
    timestamp: Number(BigInt(block.timestamp)) * 1000,
    confirmations: Number(head - BigInt(block.number) + 1n),
    success: true,
    block: { number: BigInt(block.number).toString(), hash: hex(block.hash) },
  })

  // The transaction's own value: its receipt says whether it went through (dust is not asked about).
  const candidates: { block: RawBlock; tx: RawTransaction; to: string; amount: string }[] = []
  for (const number of numbers) {
    const block = blocks.get(number)!
    for (const tx of block.transactions) {
      if (typeof tx === 'string' || !tx.to) continue
      const value = BigInt(tx.value)
      if (value === 0n) continue
      const to = getAddress(tx.to)
      if (!watched.has(to)) continue
      candidates.push({ block, tx, to, amount: fromBaseUnits(value, native.decimals) })
    }
  }
  const undusted = candidates.filter((entry) => !context.isDust?.(null, entry.amount))
  const receipts = await readReceipts(
    call,
    undusted.map((entry) => hex(entry.tx.hash))
  )
  for (const entry of candidates) {
    const transfer: ObservedTransfer = {
      ...base(entry.block),
      reference: hex(entry.tx.hash),
      position: 'value',
      to: entry.to,
      contract: null,
      amount: entry.amount,
    }
    const receipt = receipts.get(hex(entry.tx.hash))
    if (receipt) {
      if (hex(receipt.blockHash) !== hex(entry.block.hash)) {
        throw new InconsistentAnswerError(
          `the receipt of ${entry.tx.hash} is of another block (${receipt.blockHash}): another fork`
        )
      }
      if (BigInt(receipt.status) !== 1n) continue
    }
    found.push(transfer)
  }

  if (segment.tracesOffered.value) {
    // The first block alone: an endpoint without traces says so once, not once per block of a batch.
    const TRACE_BATCH = 10
    for (let index = 0; index < numbers.length; index += index === 0 ? 1 : TRACE_BATCH) {
      const batch = numbers
        .slice(index, index === 0 ? 1 : index + TRACE_BATCH)
        .map((number) => blocks.get(number)!)
      const traced = await Promise.all(
        batch.map((block) =>
          internalTransfers(
            call,
            segment.traces,
            {
              number: BigInt(block.number),
              hash: hex(block.hash),
              transactionHashes: block.transactions.map((tx) =>
                hex(typeof tx === 'string' ? tx : tx.hash)
              ),
            },
            watched
          )
        )
      )
      traced.forEach((transfers, position) => {
        if (transfers === null) {
          segment.tracesOffered.value = false
          return
        }
        for (const transfer of transfers) {
          found.push({
            ...base(batch[position]),
            reference: transfer.transactionHash,
            position: `trace:${transfer.path}`,
            to: transfer.to,
            contract: null,
            amount: fromBaseUnits(transfer.value, native.decimals),
          })
        }
      })
      if (!segment.tracesOffered.value) break
    }
  }
  return found
}
