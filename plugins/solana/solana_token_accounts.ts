import logger from '@adonisjs/core/services/logger'
import { address } from '@solana/kit'
import type { OwnedTokenAccount, SolanaRpc } from '#plugins/solana/solana_rpc'
import { TOKEN_ACCOUNTS_REFRESH_MS } from '#plugins/solana/solana_budget'

/**
 * Token accounts watched per wallet and mint besides the associated one.
 * Anyone can create token accounts owned by the gateway's wallet (it costs
 * the creator their rent): without a bound, a few SOL would multiply the
 * scan's requests. Beyond it, the balance watch still sees what comes in
 * (a reading sums every account of the mint).
 */
export const MAX_OTHER_TOKEN_ACCOUNTS = 5

/** What the scan keeps of one wallet's token accounts for one mint. */
export type OwnedAccounts = {
  /** Token accounts of the mint the wallet owns and the scan watches, besides its associated one. */
  others: string[]
  /** When they were last listed (epoch ms); null: never successfully. */
  listedAt: number | null
  /** When a listing was last tried (epoch ms): a failing one is tried again a period later. */
  triedAt: number
}

/** By wallet, then mint. */
export type TokenAccountLists = Record<string, Record<string, OwnedAccounts>>

/** One wallet and mint whose token accounts are watched. */
export type OwnerPair = { wallet: string; mint: string; associated: string }

export const pairKey = (wallet: string, mint: string) => `${wallet}:${mint}`

/**
 * The accounts to watch besides the associated one: those watched already
 * (their cursors carry on), then the new ones by balance, largest first,
 * up to MAX_OTHER_TOKEN_ACCOUNTS. An account no longer listed (closed, or
 * no longer the wallet's) is dropped.
 */
export function chooseOthers(
  previous: string[],
  listed: OwnedTokenAccount[],
  pair: OwnerPair
): string[] {
  const candidates = listed.filter(
    (entry) =>
      entry.pubkey !== pair.associated && entry.owner === pair.wallet && entry.mint === pair.mint
  )
  const present = new Set(candidates.map((entry) => entry.pubkey))
  const kept = previous.filter((account) => present.has(account))
  const fresh = candidates
    .filter((entry) => !kept.includes(entry.pubkey))
    .sort((a, b) =>
      a.amount === b.amount ? (a.pubkey < b.pubkey ? -1 : 1) : a.amount > b.amount ? -1 : 1
    )
    .map((entry) => entry.pubkey)
  const chosen = [...kept, ...fresh].slice(0, MAX_OTHER_TOKEN_ACCOUNTS)
  if (kept.length + fresh.length > chosen.length) {
    logger.warn(
      {
        wallet: pair.wallet,
        mint: pair.mint,
        accounts: kept.length + fresh.length,
        watched: chosen.length,
      },
      'solana wallet owns more token accounts of a mint than are watched; the balance watch covers the rest'
    )
  }
  return chosen
}

/**
 * The watched token account lists after this run: a pair listed this run
 * already (`fresh`: the balance reading's answers) takes that listing; a
 * pair never tried, or tried longer than TOKEN_ACCOUNTS_REFRESH_MS ago, is
 * listed now (at `confirmed`: an account is watched as soon as it exists);
 * the others keep what they had. A listing that fails keeps the previous
 * list (the associated account is watched regardless) and is retried a
 * period later; it never stops the scan.
 */
export async function refreshTokenAccounts(
  rpc: SolanaRpc,
  pairs: OwnerPair[],
  previous: TokenAccountLists,
  fresh: Map<string, OwnedTokenAccount[]>,
  now: number
): Promise<TokenAccountLists> {
  const lists: TokenAccountLists = {}
  for (const pair of pairs) {
    const before = previous[pair.wallet]?.[pair.mint]
    let entry: OwnedAccounts | undefined = before
    const listed = fresh.get(pairKey(pair.wallet, pair.mint))
    if (listed) {
      entry = {
        others: chooseOthers(before?.others ?? [], listed, pair),
        listedAt: now,
        triedAt: now,
      }
    } else if (!before || now - before.triedAt >= TOKEN_ACCOUNTS_REFRESH_MS) {
      try {
        const answer = await rpc.tokenAccountsByOwner(address(pair.wallet), address(pair.mint), {
          commitment: 'confirmed',
        })
        entry = {
          others: chooseOthers(before?.others ?? [], answer.value, pair),
          listedAt: now,
          triedAt: now,
        }
      } catch (error) {
        logger.warn(
          { wallet: pair.wallet, mint: pair.mint, err: error },
          'solana token accounts of a wallet could not be listed; kept as they were'
        )
        entry = { others: before?.others ?? [], listedAt: before?.listedAt ?? null, triedAt: now }
      }
    }
    if (entry) (lists[pair.wallet] ??= {})[pair.mint] = entry
  }
  return lists
}
