import logger from '@adonisjs/core/services/logger'
import { encodeFunctionData, erc20Abi, type Hex, type PublicClient } from 'viem'
import type {
  BalanceReading,
  ObservedTransfer,
  ScanContext,
  ScanResult,
  SeenAmount,
} from '#chains/chain_family'
import { RpcAnswerError, RpcUnavailableError } from '#chains/rpc_pool'
import { evmCall } from '#plugins/evm/evm_client'
import { evmOptions } from '#plugins/evm/evm_options'
import { MissingBlockError } from '#plugins/evm/evm_errors'
import { fromBaseUnits } from '#support/text/money'
import { min, readBlocks, readHead, type Call } from '#plugins/evm/evm_reads'
import {
  InconsistentAnswerError,
  ParentMismatchError,
  readSegment,
  type SegmentContext,
} from '#plugins/evm/evm_segment'
import { unconfirmedEvm } from '#plugins/evm/evm_unconfirmed'
import { isOwnNode } from '#chains/chain_rpc'

/**
 * Where the last scan stopped: the last block scanned and its hash, and the
 * hashes of the blocks below it (`recent`: the first 16 hex digits of each,
 * oldest first, ending with `block`'s own), as deep as the chain's
 * `reorgDepth`: a reorganisation is walked back to the block both chains
 * share.
 */
type EvmCursor = { block: string; hash: string; recent?: string[] }

/**
 * Blocks one consistency-checked segment covers at most (its blocks are
 * read again when its answers do not hold together); never more than the
 * chain's log range, so that a segment is one eth_getLogs.
 */
const SEGMENT_BLOCKS = 200n

/**
 * Times a segment is asked again when its answers do not hold together,
 * and the waits between: the next request of a load-balanced URL may reach
 * another node, a lagging one catches up within a block or two. The next
 * run asks again anyway.
 */
const RETRY_WAITS_MS = [250, 500, 1000]

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The part of a hash kept per block in the cursor (64 bits: enough to tell forks apart). */
const short = (hash: string) => hash.toLowerCase().slice(2, 18)

/** The endpoints' answers did not hold together however often they were asked (this run). */
class StillInconsistentError extends Error {
  constructor(
    message: string,
    /** The lowest block the node lacked at the last try, when that was the trouble. */
    readonly missing?: bigint
  ) {
    super(message)
  }
}

/**
 * Runs `read`, asking again while the answers do not hold together (a block
 * the node does not have yet, a log or a block of another fork): the
 * endpoint that answered is asked after the others, and after a short wait
 * the same endpoint is asked again (one URL load-balanced over nodes of
 * different heights: the next request may reach another one). Never skips:
 * after the last attempt the run stops there and the next one asks again.
 */
async function consistently<T>(
  context: ScanContext,
  what: string,
  read: () => Promise<T>,
  /** Errors handed to the caller at once, not asked again. */
  passOn: (error: unknown) => boolean = () => false
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await read()
    } catch (error) {
      if (passOn(error)) throw error
      if (!(error instanceof MissingBlockError || error instanceof InconsistentAnswerError))
        throw error
      if (error instanceof RpcAnswerError) context.rpc.doubt(error.endpoint)
      if (attempt >= RETRY_WAITS_MS.length) {
        throw new StillInconsistentError(
          `${what}: ${error.message} (asked ${attempt + 1} times)`,
          error instanceof MissingBlockError ? error.block : undefined
        )
      }
      await sleep(RETRY_WAITS_MS[attempt])
    }
  }
}

/**
 * One scan of an EVM chain, from the block after the cursor up to the
 * deepest block with `confirmations` confirmations, at most
 * `maxBlocksPerScan` blocks, segment by segment (evm_segment.ts: every
 * answer is shown consistent before a segment counts). The cursor only
 * ever moves over segments read in full; a segment whose answers do not
 * hold together after a few tries ends the run there (interrupted), the
 * next run asks again. A segment whose first block does not follow the
 * cursor's is a reorganisation when the cursor's block itself was
 * replaced: the scan walks back to the block both chains share and scans
 * again from there, reporting it (the core flags payments of replaced
 * blocks). The calls depend on the blocks and the watched addresses, never
 * on how many orders are open.
 *
 * Once caught up, the blocks above the deepest confirmed one are looked at
 * too, for transfers not yet deep enough (evm_unconfirmed.ts): reported as
 * `unconfirmed`, never paid. And when the core asks, the balances of the
 * watched addresses are read as of the cursor's block (pinned by its hash).
 */
export async function scanEvm(context: ScanContext): Promise<ScanResult> {
  const { rpc } = context
  const call = evmCall(rpc)
  const options = evmOptions(context.chain)

  const head = await readHead(call)
  const depth = BigInt(Math.max(context.chain.confirmations, 1))
  const safe = head - depth + 1n

  const previous = readCursor(context.cursor)
  let from: bigint
  let parent: Hex | null
  let recent: string[]
  if (previous) {
    from = BigInt(previous.block) + 1n
    parent = previous.hash as Hex
    recent = previous.recent ?? [short(previous.hash)]
  } else {
    from = await consistently(context, 'finding the first block to scan', () =>
      firstBlockAt(call, head, context.startTime)
    )
    parent = null
    recent = []
  }

  if (safe < from) {
    const cursor =
      previous ??
      (await consistently(context, 'reading the start block', () => cursorAt(call, from - 1n)))
    return {
      transfers: [],
      unconfirmed: await unconfirmedOf(call, context, safe, head),
      cursor,
      caughtUp: true,
      heights: { head: head.toString(), scanned: cursor.block },
      seen: [],
      balances: await balancesOf(call, context, cursor),
    }
  }

  const to = min(safe, from + BigInt(context.maxBlocksPerScan) - 1n)
  const segmentBlocks = min(SEGMENT_BLOCKS, BigInt(options.blockRange))
  const traces =
    options.traces ?? (rpc.urls.length > 0 && rpc.urls.every(isOwnNode) ? 'auto' : 'off')
  const segment: SegmentContext = {
    context,
    call,
    head,
    blockRange: options.blockRange,
    traces,
    tracesOffered: {
      value: traces !== 'off' && context.tokens.some((token) => token.contract === null),
    },
  }
  const transfers: ObservedTransfer[] = []
  const seen: SeenAmount[] = []
  let dust = 0
  let reorg: ScanResult['reorg']
  let done: { block: bigint; hash: Hex } | null = previous
    ? { block: BigInt(previous.block), hash: previous.hash as Hex }
    : null

  /** Takes a segment's reading in: its payments, and the cursor moves over it. */
  const keep = (reading: Awaited<ReturnType<typeof readSegment>>) => {
    transfers.push(...reading.transfers)
    seen.push(...reading.seen)
    dust += reading.dust
    for (const entry of reading.hashes) recent.push(short(entry.hash))
    if (recent.length > options.reorgDepth)
      recent = recent.slice(recent.length - options.reorgDepth)
    const last = reading.hashes.at(-1)!
    done = { block: last.number, hash: last.hash }
    parent = last.hash
  }

  let start = from
  /** The cursor's block was read again and is unchanged: a block not following it is another node's answer. */
  let cursorChecked = false
  try {
    while (start <= to) {
      let end = min(to, start + segmentBlocks - 1n)
      let reading
      try {
        // Right after the cursor, a block that does not follow it is looked into (a reorganisation?) before anything is asked again.
        const afterCursor = done !== null && start === from && !reorg && !cursorChecked
        reading = await consistently(
          context,
          `blocks ${start}–${end}`,
          () => readSegment(segment, start, end, parent),
          (error) => afterCursor && error instanceof ParentMismatchError
        )
      } catch (error) {
        if (
          error instanceof StillInconsistentError &&
          error.missing !== undefined &&
          error.missing > start &&
          error.missing <= end
        ) {
          // The node has the blocks below the one it lacks: those are read (and kept) now, the rest waits.
          end = error.missing - 1n
          const shortened = end
          reading = await consistently(context, `blocks ${start}–${shortened}`, () =>
            readSegment(segment, start, shortened, parent)
          )
          keep(reading)
          throw error
        }
        if (!(error instanceof ParentMismatchError) || !done || start !== from || reorg) throw error
        // The block after the cursor does not follow it: was the cursor's block replaced?
        const ancestor = await consistently(context, 'walking back a reorganisation', () =>
          commonAncestor(call, BigInt(done!.block), done!.hash, recent, options.reorgDepth)
        )
        if (ancestor === null) {
          // The cursor's block is still ours: that answer came from a node on another fork. Asked again.
          cursorChecked = true
          continue
        }
        reorg = { ancestor: ancestor.block.toString(), replacedUpTo: done.block.toString() }
        logger.warn(
          {
            network: context.chain.network,
            ancestor: reorg.ancestor,
            replacedUpTo: reorg.replacedUpTo,
          },
          'a reorganisation replaced scanned blocks; scanning again from the block both chains share'
        )
        recent = recent.slice(0, Math.max(0, recent.length - Number(done.block - ancestor.block)))
        if (recent.length === 0 || recent.at(-1) !== short(ancestor.hash))
          recent = [short(ancestor.hash)]
        done = { block: ancestor.block, hash: ancestor.hash }
        parent = ancestor.hash
        start = ancestor.block + 1n
        from = start
        continue
      }
      keep(reading)
      start = end + 1n
    }
  } catch (error) {
    if (!(
      error instanceof RpcUnavailableError ||
      error instanceof StillInconsistentError ||
      error instanceof MissingBlockError
    )) {
      throw error
    }
    if (!done) throw error
    const cursor = { block: done.block.toString(), hash: done.hash, recent }
    return {
      transfers,
      cursor,
      caughtUp: false,
      interrupted: `stopped after block ${cursor.block}: ${(error as Error).message}`,
      dust,
      seen,
      reorg,
      heights: { head: head.toString(), scanned: cursor.block },
    }
  }

  const cursor: EvmCursor = { block: done!.block.toString(), hash: done!.hash, recent }
  const caughtUp = done!.block === safe
  // Behind: the blocks above `safe` are far ahead; look at them once caught up.
  const unconfirmed = caughtUp ? await unconfirmedOf(call, context, safe, head) : undefined
  return {
    transfers,
    unconfirmed,
    cursor,
    caughtUp,
    dust,
    seen,
    reorg,
    heights: { head: head.toString(), scanned: cursor.block },
    balances: caughtUp ? await balancesOf(call, context, cursor) : undefined,
  }
}

function readCursor(raw: unknown): EvmCursor | null {
  if (!raw || typeof raw !== 'object') return null
  const cursor = raw as Partial<EvmCursor>
  if (
    typeof cursor.block !== 'string' ||
    !/^\d+$/.test(cursor.block) ||
    typeof cursor.hash !== 'string'
  )
    return null
  const recent =
    Array.isArray(cursor.recent) && cursor.recent.every((entry) => typeof entry === 'string')
      ? cursor.recent
      : undefined
  return { block: cursor.block, hash: cursor.hash, recent }
}

/**
 * Where the chain the node now follows and the scanned one part: the
 * newest block below the cursor whose hash is the one kept. Null when the
 * cursor's block itself is unchanged (no reorganisation: the answer that
 * did not follow it came from another fork). When no kept hash matches
 * (too few kept yet, or a reorganisation deeper than `reorgDepth`), the
 * scan goes back `reorgDepth` blocks below the cursor, or below the oldest
 * kept hash, whichever is lower: rescanning too much costs requests,
 * too little could miss a payment.
 */
async function commonAncestor(
  call: Call,
  cursorBlock: bigint,
  cursorHash: Hex,
  recent: string[],
  reorgDepth: number
): Promise<{ block: bigint; hash: Hex } | null> {
  const firstAnswer = await readBlocks(call, [cursorBlock], false)
  const [now] = [...firstAnswer.values()]
  if (now.hash.toLowerCase() === cursorHash.toLowerCase()) return null
  // Asked again: one answer of a node on another fork is not enough to rescan and flag payments.
  const secondAnswer = await readBlocks(call, [cursorBlock], false)
  const [again] = [...secondAnswer.values()]
  if (again.hash.toLowerCase() !== now.hash.toLowerCase()) {
    throw new InconsistentAnswerError(`block ${cursorBlock} was answered with two different hashes`)
  }
  const oldest = cursorBlock - BigInt(recent.length) + 1n
  const floor = max(0n, min(oldest - 1n, cursorBlock - BigInt(reorgDepth)))
  let above: { parentHash: Hex } = again
  for (let top = cursorBlock - 1n; top >= floor; top -= 50n) {
    const low = max(floor, top - 49n)
    const numbers: bigint[] = []
    for (let number = top; number >= low; number--) numbers.push(number)
    const blocks = await readBlocks(call, numbers, false)
    for (const number of numbers) {
      const block = blocks.get(number)!
      if (block.hash.toLowerCase() !== above.parentHash.toLowerCase()) {
        throw new InconsistentAnswerError(
          `blocks ${number} and ${number + 1n} were read from different forks`
        )
      }
      if (number >= oldest && recent[Number(number - oldest)] === short(block.hash)) {
        return { block: number, hash: block.hash.toLowerCase() as Hex }
      }
      if (number === floor) {
        logger.warn(
          { block: cursorBlock.toString(), kept: recent.length, from: floor.toString() },
          'no kept block hash matches the new chain (a reorganisation deeper than the chain option reorgDepth, or too few kept yet): scanning again from further back'
        )
        return { block: number, hash: block.hash.toLowerCase() as Hex }
      }
      above = block
    }
  }
  const genesisAnswer = await readBlocks(call, [0n], false)
  const [genesis] = [...genesisAnswer.values()]
  return { block: 0n, hash: genesis.hash.toLowerCase() as Hex }
}

function max(a: bigint, b: bigint) {
  return a > b ? a : b
}

/**
 * The not yet deep enough transfers, for the payer's page only: failing to
 * read them must not fail the scan (nothing unconfirmed is reported, the
 * sightings recorded before stay).
 */
async function unconfirmedOf(call: Call, context: ScanContext, safe: bigint, head: bigint) {
  try {
    return await unconfirmedEvm(call, context, safe, head)
  } catch (error) {
    logger.warn(
      { network: context.chain.network, err: error },
      'unconfirmed EVM transfers could not be read'
    )
    return undefined
  }
}

/**
 * The watched balances as of the cursor's block, pinned by its hash
 * (EIP-1898): a node without that very block refuses instead of answering
 * for another one. Only when the core asked (ScanContext.readBalances);
 * a failure leaves this run without readings (the next one tries again).
 */
async function balancesOf(
  call: Call,
  context: ScanContext,
  cursor: EvmCursor
): Promise<ScanResult['balances']> {
  if (!context.readBalances) return undefined
  try {
    const at = { blockHash: cursor.hash, requireCanonical: true }
    const wanted = context.addresses.flatMap((address) =>
      context.tokens.map((token) => ({ address, token }))
    )
    const readings: BalanceReading[] = []
    for (let index = 0; index < wanted.length; index += 50) {
      const batch = wanted.slice(index, index + 50)
      const answers = await call((client: PublicClient) =>
        Promise.all(
          batch.map(({ address, token }) =>
            token.contract === null
              ? client.request({ method: 'eth_getBalance', params: [address as Hex, at as any] })
              : client.request({
                  method: 'eth_call',
                  params: [
                    {
                      to: token.contract as Hex,
                      data: encodeFunctionData({
                        abi: erc20Abi,
                        functionName: 'balanceOf',
                        args: [address as Hex],
                      }),
                    },
                    at as any,
                  ],
                })
          )
        )
      )
      answers.forEach((answer, position) => {
        const { address, token } = batch[position]
        readings.push({
          address,
          contract: token.contract,
          amount: fromBaseUnits(BigInt(answer as Hex), token.decimals),
        })
      })
    }
    return { height: cursor.block, readings }
  } catch (error) {
    logger.warn(
      { network: context.chain.network, err: error },
      'EVM balances could not be read; the balance watch reads them next time'
    )
    return undefined
  }
}

async function cursorAt(call: Call, block: bigint): Promise<EvmCursor> {
  const number = block < 0n ? 0n : block
  const headers = await readBlocks(call, [number], false)
  const [header] = [...headers.values()]
  return { block: number.toString(), hash: header.hash.toLowerCase(), recent: [short(header.hash)] }
}

/** The first block at or after `time` (binary search on block timestamps, up to `top`). */
async function firstBlockAt(call: Call, top: bigint, time: number): Promise<bigint> {
  const target = BigInt(Math.floor(time / 1000))
  let low = 0n
  let high = top
  while (low < high) {
    const middle = (low + high) / 2n
    const middleAnswer = await readBlocks(call, [middle], false)
    const [block] = [...middleAnswer.values()]
    if (BigInt(block.timestamp) < target) low = middle + 1n
    else high = middle
  }
  return low
}
