import logger from '@adonisjs/core/services/logger'
import { getAddress, type Block } from 'viem'
import type Token from '#models/token'
import type { ObservedTransfer, ScanContext, ScanResult } from '#chains/chain_family'
import { evmCall } from '#plugins/evm/evm_client'
import { RpcUnavailableError } from '#chains/rpc_pool'
import { evmOptions } from '#plugins/evm/evm_options'
import { fromBaseUnits } from '#support/money'
import { tokenOfContract } from '#plugins/evm/erc20_transfers'
import { BLOCK_BATCH, tokenLogs, type Call } from '#plugins/evm/evm_reads'
import { unconfirmedEvm } from '#plugins/evm/evm_unconfirmed'

/** Where the last scan stopped: the last block scanned and its hash (reorg check). */
type EvmCursor = { block: string; hash: string }

/** How far back to rescan when the block under the cursor was replaced. */
const REORG_REWIND = 128n

/**
 * One scan of an EVM chain, from the block after the cursor up to the
 * deepest block with `confirmations` confirmations, at most
 * `maxBlocksPerScan` blocks:
 * - token transfers: eth_getLogs of Transfer events of the enabled token
 *   contracts whose `to` is a watched address, `blockRange` blocks a call (chain option)
 *   (a range the node refuses is split in two);
 * - native coin: every block of the range with its transactions (batched),
 *   keeping transactions to watched addresses that succeeded.
 * The calls depend on the blocks and the watched addresses, never on how
 * many orders are open. A cursor whose block hash changed means a
 * reorganisation deeper than the confirmations: the scan goes back
 * REORG_REWIND blocks and looks again.
 * Once caught up, the blocks above the deepest confirmed one are looked at
 * too, for transfers not yet deep enough (evm_unconfirmed.ts): reported as
 * `unconfirmed`, never paid.
 */
export async function scanEvm(context: ScanContext): Promise<ScanResult> {
  const { rpc } = context
  const call = evmCall(rpc)

  const head = await call((client) => client.getBlockNumber())
  const depth = BigInt(Math.max(context.chain.confirmations, 1))
  const safe = head - depth + 1n

  const previous = context.cursor as EvmCursor | null
  let from: bigint
  if (previous) {
    const cursorBlock = BigInt(previous.block)
    const block = cursorBlock <= head ? await call((client) => client.getBlock({ blockNumber: cursorBlock })) : null
    if (block && block.hash === previous.hash) {
      from = cursorBlock + 1n
    } else {
      from = cursorBlock > REORG_REWIND ? cursorBlock - REORG_REWIND : 0n
      logger.warn(
        { network: context.chain.network, block: previous.block },
        'the block under the scan cursor was replaced (reorganisation); scanning again from an earlier block'
      )
    }
  } else {
    from = await firstBlockAt(call, head, context.startTime)
  }

  if (safe < from) {
    const cursor = previous ?? (await cursorAt(call, from - 1n))
    return {
      transfers: [],
      unconfirmed: await unconfirmedOf(call, context, safe, head),
      cursor,
      caughtUp: true,
      heights: { head: head.toString(), scanned: cursor.block },
    }
  }
  const to = min(safe, from + BigInt(context.maxBlocksPerScan) - 1n)
  const watched = new Set(context.addresses)
  const blocks = new Map<bigint, Block>()
  const transfers: ObservedTransfer[] = []

  // Dust (address poisoning, spam) is dropped before its header or receipt is read.
  let dust = 0
  const isDust = (contract: string | null, amount: string) => {
    const dropped = context.isDust?.(contract, amount) ?? false
    if (dropped) dust++
    return dropped
  }

  const contracts = context.tokens.filter((token) => token.contract !== null)
  const native = context.tokens.find((token) => token.contract === null)
  const range = BigInt(evmOptions(context.chain).blockRange)
  // Segment by segment (one eth_getLogs range each), so that a run stopped
  // by a limit or an outage keeps the segments it finished.
  let done = from - 1n
  try {
    for (let start = from; start <= to; start += range) {
      const end = min(to, start + range - 1n)
      const found: ObservedTransfer[] = []
      if (contracts.length > 0) {
        const logs = await tokenLogs(call, contracts, context.addresses, start, end, range)
        for (const log of logs) {
          const token = tokenOfContract(contracts, log.address)
          if (!token || !watched.has(getAddress(log.args.to))) continue
          const amount = fromBaseUnits(log.args.value, token.decimals)
          if (isDust(token.contract, amount)) continue
          const block = await blockOf(call, blocks, log.blockNumber)
          found.push({
            reference: log.transactionHash.toLowerCase(),
            position: `log:${log.logIndex}`,
            to: getAddress(log.args.to),
            contract: token.contract,
            amount,
            timestamp: Number(block.timestamp) * 1000,
            confirmations: Number(head - log.blockNumber + 1n),
            success: true,
          })
        }
      }
      if (native) found.push(...(await nativeTransfers(call, native, watched, start, end, head, blocks, isDust)))
      transfers.push(...found)
      done = end
    }
  } catch (error) {
    const stopped = await stoppedAt(call, blocks, done, from, error)
    return {
      transfers,
      cursor: stopped,
      caughtUp: false,
      interrupted: `stopped after block ${stopped.block}: ${(error as Error).message}`,
      dust,
      heights: { head: head.toString(), scanned: stopped.block },
    }
  }

  const last = blocks.get(to) ?? (await call((client) => client.getBlock({ blockNumber: to })))
  const caughtUp = to === safe
  // Behind: the blocks above `safe` are far ahead; look at them once caught up.
  const unconfirmed = caughtUp ? await unconfirmedOf(call, context, safe, head) : undefined
  return {
    transfers,
    unconfirmed,
    cursor: { block: to.toString(), hash: last.hash },
    caughtUp,
    dust,
    heights: { head: head.toString(), scanned: to.toString() },
  }
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
    logger.warn({ network: context.chain.network, err: error }, 'unconfirmed EVM transfers could not be read')
    return undefined
  }
}

/**
 * Where an interrupted run stops: the last block of its last finished
 * segment. Only an endpoint failure (every endpoint down, limited or
 * spent) interrupts; anything else, or nothing finished, or the last
 * block's hash unknown, fails the run as before (nothing saved).
 */
async function stoppedAt(
  call: Call,
  blocks: Map<bigint, Block>,
  done: bigint,
  from: bigint,
  error: unknown
): Promise<EvmCursor> {
  if (!(error instanceof RpcUnavailableError) || done < from) throw error
  const known = blocks.get(done)
  if (known?.hash) return { block: done.toString(), hash: known.hash }
  try {
    const header = await call((client) => client.getBlock({ blockNumber: done }))
    return { block: done.toString(), hash: header.hash }
  } catch {
    throw error
  }
}

function min(a: bigint, b: bigint) {
  return a < b ? a : b
}

async function cursorAt(call: Call, block: bigint): Promise<EvmCursor> {
  const number = block < 0n ? 0n : block
  const header = await call((client) => client.getBlock({ blockNumber: number }))
  return { block: number.toString(), hash: header.hash }
}

async function blockOf(call: Call, cache: Map<bigint, Block>, number: bigint): Promise<Block> {
  let block = cache.get(number)
  if (!block) {
    block = await call((client) => client.getBlock({ blockNumber: number }))
    cache.set(number, block)
  }
  return block
}

/** The first block at or after `time` (binary search on block timestamps). */
async function firstBlockAt(call: Call, head: bigint, time: number): Promise<bigint> {
  const target = BigInt(Math.floor(time / 1000))
  let low = 0n
  let high = head
  while (low < high) {
    const middle = (low + high) / 2n
    const block = await call((client) => client.getBlock({ blockNumber: middle }))
    if (block.timestamp < target) low = middle + 1n
    else high = middle
  }
  return low
}

async function nativeTransfers(
  call: Call,
  native: Token,
  watched: Set<string>,
  from: bigint,
  to: bigint,
  head: bigint,
  blocks: Map<bigint, Block>,
  isDust: (contract: string | null, amount: string) => boolean
): Promise<ObservedTransfer[]> {
  const found: ObservedTransfer[] = []
  for (let start = from; start <= to; start += BigInt(BLOCK_BATCH)) {
    const numbers: bigint[] = []
    for (let number = start; number <= min(to, start + BigInt(BLOCK_BATCH) - 1n); number++) numbers.push(number)
    const fetched = await call((client) =>
      Promise.all(numbers.map((blockNumber) => client.getBlock({ blockNumber, includeTransactions: true })))
    )
    for (const block of fetched) {
      blocks.set(block.number!, block as Block)
      for (const tx of block.transactions) {
        if (typeof tx === 'string' || !tx.to || tx.value === 0n) continue
        const recipient = getAddress(tx.to)
        if (!watched.has(recipient)) continue
        const amount = fromBaseUnits(tx.value, native.decimals)
        if (isDust(null, amount)) continue
        const receipt = await call((client) => client.getTransactionReceipt({ hash: tx.hash }))
        if (receipt.status !== 'success') continue
        found.push({
          reference: tx.hash.toLowerCase(),
          position: 'value',
          to: recipient,
          contract: null,
          amount,
          timestamp: Number(block.timestamp) * 1000,
          confirmations: Number(head - block.number! + 1n),
          success: true,
        })
      }
    }
  }
  return found
}
