import logger from '@adonisjs/core/services/logger'
import { address } from '@solana/kit'
import type { BalanceReading, SeenAmount } from '#chains/chain_family'
import type { SolanaCommitment } from '#plugins/solana/solana_commitment'
import {
  ContextSlotNotReachedError,
  type OwnedTokenAccount,
  type SolanaRpc,
} from '#plugins/solana/solana_rpc'
import { SOL_DECIMALS } from '#plugins/solana/solana_transfers'
import { pairKey } from '#plugins/solana/solana_token_accounts'
import { Decimal, fromBaseUnits } from '#support/text/money'

/** One balance as the node answered it, at its own slot. */
export type BalanceRead = { address: string; contract: string | null; amount: string; slot: bigint }

export type BalanceSnapshot = {
  reads: BalanceRead[]
  /** The getTokenAccountsByOwner answers, by pairKey(wallet, mint): the watched lists are refreshed from them. */
  listings: Map<string, OwnedTokenAccount[]>
  /** The newest slot a read was answered at: the scan's listings of this run must reach it. */
  height: bigint
}

/**
 * The balance of every watched wallet in every enabled token, at the
 * scan's commitment (what it treats as confirmed): SOL by getBalance, a
 * token as the sum of every token account of the mint the wallet owns
 * (getTokenAccountsByOwner, which lists them for the scan as well). Cost:
 * one call per wallet for SOL, one per wallet and mint.
 *
 * Every read must be answered at `floor` or later (minContextSlot): the
 * newest slot the scan has already processed, then the first read's slot,
 * so that no read comes from a node behind what was seen. Mints that do
 * not exist on chain (unresolved) are not read. Null when a node was
 * behind or a read failed: no reading this run (the watch asks again at
 * the next one).
 */
export async function readBalanceSnapshot(
  rpc: SolanaRpc,
  options: {
    wallets: string[]
    native: boolean
    mints: string[]
    commitment: SolanaCommitment
    floor: bigint | null
  }
): Promise<BalanceSnapshot | null> {
  let floor = options.floor ?? undefined
  const reads: BalanceRead[] = []
  const listings = new Map<string, OwnedTokenAccount[]>()
  const at = (slot: bigint) => {
    if (floor === undefined || slot > floor) floor = slot
  }
  try {
    for (const wallet of options.wallets) {
      if (options.native) {
        const answer = await rpc.balance(address(wallet), {
          commitment: options.commitment,
          minContextSlot: floor,
        })
        reads.push({
          address: wallet,
          contract: null,
          amount: fromBaseUnits(answer.value, SOL_DECIMALS),
          slot: answer.slot,
        })
        at(answer.slot)
      }
      for (const mint of options.mints) {
        const answer = await rpc.tokenAccountsByOwner(address(wallet), address(mint), {
          commitment: options.commitment,
          minContextSlot: floor,
        })
        const accounts = answer.value.filter(
          (entry) => entry.mint === mint && entry.owner === wallet
        )
        const sum = accounts.reduce((total, entry) => total + entry.amount, 0n)
        const amount = accounts.length > 0 ? fromBaseUnits(sum, accounts[0].decimals) : '0'
        reads.push({ address: wallet, contract: mint, amount, slot: answer.slot })
        listings.set(pairKey(wallet, mint), answer.value)
        at(answer.slot)
      }
    }
  } catch (error) {
    if (error instanceof ContextSlotNotReachedError) {
      rpc.doubt(error.endpoint)
      logger.info(
        { minContextSlot: String(error.minContextSlot) },
        'solana balances not read: the endpoint is behind the scan'
      )
    } else {
      logger.warn(
        { err: error },
        'solana balances could not be read; the watch asks again next run'
      )
    }
    return null
  }
  if (reads.length === 0 || floor === undefined) return null
  return { reads, listings, height: floor }
}

/**
 * The readings as of one height, the snapshot's newest slot. A read
 * answered at an older slot misses what came in between; the scan's
 * listings reach that height (minContextSlot), so every incoming amount it
 * saw to that address and token in between is added to the read: the
 * reading is then the balance as of the height, save for outgoing
 * transfers in those few slots (a reading lower than true, never a rise
 * that was not there).
 */
export function balancesAsOf(
  snapshot: BalanceSnapshot,
  seen: SeenAmount[]
): { height: string; readings: BalanceReading[] } {
  const readings = snapshot.reads.map((read) => {
    let amount = new Decimal(read.amount)
    for (const entry of seen) {
      if (entry.to !== read.address || entry.contract !== read.contract) continue
      const slot = BigInt(entry.height)
      if (slot > read.slot && slot <= snapshot.height) amount = amount.plus(entry.amount)
    }
    return { address: read.address, contract: read.contract, amount: amount.toFixed() }
  })
  return { height: snapshot.height.toString(), readings }
}
