import logger from '@adonisjs/core/services/logger'
import type { BalanceReading, ScanContext, ScanResult } from '#chains/chain_family'
import { fromBaseUnits } from '#support/text/money'
import type { TronGridClient } from '#plugins/tron/trongrid_client'
import type { HeldBalances } from '#plugins/tron/tron_scan_cursor'

/**
 * Blocks a balance answer may stand behind the solid head another request
 * reported: TronGrid balances its API over many nodes, whose solidified
 * blocks differ by a block or two, and an answer does not say which block
 * it was read at.
 */
export const BALANCE_SKEW_BLOCKS = 3

/**
 * Whether an incoming row of a watched address and token was listed with
 * a block time in (`after`, `upTo`] (TronScanRun.incomingNear).
 */
export type IncomingNear = (after: number, upTo: number) => boolean

/**
 * Reads the balance of every watched address in every enabled token at
 * the latest solidified block, for the balance watch: TRX from
 * /walletsolidity/getaccount, each TRC-20 token from balanceOf through
 * /walletsolidity/triggerconstantcontract. One request per address and
 * token, plus two solid head reads (header only).
 *
 * Neither answer names the block it was read at, and the solid head moves
 * every 3 s, so a reading is tied to a block by what happened around it:
 * the solid head is read before (B) and after (A) the balances, each of
 * which is then the balance at some block between B (or a few blocks
 * before: a backend behind) and A. The reading stands for B, and holds
 * only when no incoming transfer of a watched address and token lies in
 * that span: there a transfer could be in the balance or not, and the
 * watch would count it in the wrong window (an "unexplained" amount that
 * is not). A transfer nobody listed there is what the watch is for:
 * counted a window early or late, it is reported either way; an outgoing
 * one can only lower a rise.
 *
 * Heights are block times (ms), like the `seen` amounts': the height of
 * block B is its time, and a transfer counts up to B when its block's
 * time is at or before B's.
 *
 * Null when no reading holds this run (a transfer in the span, a failed
 * read: logged); the scan's results stand and a later run reads again.
 */
export async function readTronBalances(
  client: TronGridClient,
  context: ScanContext,
  run: { incomingNear: IncomingNear; solidTimestamp: number }
): Promise<HeldBalances | null> {
  const { incomingNear } = run
  const skew =
    BALANCE_SKEW_BLOCKS * (context.chain.blockTimeMs > 0 ? context.chain.blockTimeMs : 3000)
  const skip = (reason: string) => {
    logger.debug({ network: context.chain.network, reason }, 'TRON balances not read this run')
    return null
  }
  // Against the run's own solid head first, so that nothing is spent on a
  // reading that could not hold (a busy address: the next runs try again).
  if (incomingNear(run.solidTimestamp - skew, run.solidTimestamp))
    return skip('a transfer just before the solid head')
  try {
    const before = await client.nowBlock(true)
    const readings = await Promise.all(
      context.addresses.flatMap((address) =>
        context.tokens.map(async (token): Promise<BalanceReading> => {
          const units =
            token.contract === null
              ? await client.trxBalance(address, true)
              : await client.trc20Balance(address, token.contract, true)
          return { address, contract: token.contract, amount: fromBaseUnits(units, token.decimals) }
        })
      )
    )
    const after = await client.nowBlock(true)
    if (after.number < before.number) return skip('the solid head went back between two reads')
    const span: [number, number] = [before.timestamp - skew, after.timestamp]
    if (incomingNear(...span)) return skip('a transfer while the balances were read')
    return { height: before.timestamp, span, readings }
  } catch (error) {
    logger.warn(
      {
        network: context.chain.network,
        reason: context.rpc.redact((error as Error)?.message || String(error)),
      },
      'TRON balances could not be read; a later run reads again'
    )
    return null
  }
}

/**
 * What becomes of a held reading this run. TronGrid's index may list a
 * row minutes after its block (up to the look-back, which every run
 * lists again): the core compares a reading with the amounts seen up to
 * its height, so the reading is given only once the listings have
 * covered `lookbackMs` past it, with the run caught up. An incoming
 * transfer listed in its span since (late) voids it: the core asks again.
 */
export function settleHeldBalances(
  held: HeldBalances | null,
  run: { incomingNear: IncomingNear; caughtUp: boolean; solidTimestamp: number; lookbackMs: number }
): { give: ScanResult['balances'] | undefined; keep: HeldBalances | null } {
  if (!held) return { give: undefined, keep: null }
  if (run.incomingNear(...held.span)) return { give: undefined, keep: null }
  if (!run.caughtUp || run.solidTimestamp < held.height + run.lookbackMs)
    return { give: undefined, keep: held }
  return { give: { height: String(held.height), readings: held.readings }, keep: null }
}
