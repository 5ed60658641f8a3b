import logger from '@adonisjs/core/services/logger'
import { signature, type Address, type Signature } from '@solana/kit'
import type { ObservedTransfer } from '#chains/chain_family'
import type { SignatureInfo, SolanaRpc } from '#plugins/solana/solana_rpc'
import {
  tokenAccountOwners,
  blockTimeMs,
  readTransfers,
  succeeded,
  type ChainTransfer,
  type TokenAccountOwners,
} from '#plugins/solana/solana_transfers'

/** Newest `confirmed` signatures looked at per account and run (a payment is finalized within seconds). */
export const UNCONFIRMED_PAGE = 25
/** getSignatureStatuses takes at most 256 signatures. */
const STATUS_BATCH = 256
/** Parsed confirmed transactions kept between runs (they are read once while they wait for finality). */
const PARSED_KEPT = 1000

type Parsed = { transfers: ChainTransfer[]; timestamp: number | null }
const parsed = new Map<string, Parsed>()

/** One watched account and the newest finalized signature its scan has processed. */
export type UnconfirmedAccount = { account: Address; until: string | null }

/**
 * Transfers to the watched wallets that are `confirmed` but not yet
 * `finalized`, when the chain waits for finality: the payer's page says
 * "payment seen". Extra RPC cost per run: one getSignaturesForAddress
 * (confirmed, newer than the account's finalized cursor, one page) per
 * watched account; when any is waiting, one getSignatureStatuses (its depth
 * in blocks); one getTransaction per waiting signature, once (kept between
 * runs).
 */
export async function unconfirmedSolana(
  rpc: SolanaRpc,
  accounts: UnconfirmedAccount[],
  known: TokenAccountOwners,
  wallets: Set<string>,
  contracts: Set<string | null>
): Promise<ObservedTransfer[]> {
  const waiting = new Map<string, SignatureInfo>()
  for (const entry of accounts) {
    const page = await rpc.signaturesForAddress(entry.account, {
      limit: UNCONFIRMED_PAGE,
      commitment: 'confirmed',
      until: entry.until ? signature(entry.until) : undefined,
    })
    for (const info of page) {
      // finalized ones are the confirmed scan's (next run); failed ones moved nothing
      if (info.err === null && info.confirmationStatus !== 'finalized')
        waiting.set(info.signature, info)
    }
  }
  if (waiting.size === 0) return []

  const signatures = [...waiting.keys()] as Signature[]
  const found: ObservedTransfer[] = []
  for (let start = 0; start < signatures.length; start += STATUS_BATCH) {
    const statuses = await rpc.signatureStatuses(signatures.slice(start, start + STATUS_BATCH))
    for (const [entry, status] of statuses) {
      // unknown now (dropped with its fork), finalized meanwhile, or failed: nothing to show
      if (!status || status.err !== null || status.confirmationStatus === 'finalized') continue
      const info = waiting.get(entry)!
      const reading = await parsedTransaction(rpc, info, known)
      if (!reading) continue
      const timestamp =
        reading.timestamp ?? (info.blockTime === null ? Date.now() : Number(info.blockTime) * 1000)
      for (const transfer of reading.transfers) {
        if (!wallets.has(transfer.to) || !contracts.has(transfer.contract)) continue
        found.push({
          ...transfer,
          reference: info.signature,
          timestamp,
          confirmations: Math.max(1, status.confirmations ?? 1),
          success: true,
        })
      }
    }
  }
  return found
}

async function parsedTransaction(
  rpc: SolanaRpc,
  info: SignatureInfo,
  known: TokenAccountOwners
): Promise<Parsed | null> {
  const kept = parsed.get(info.signature)
  if (kept) return kept
  let transaction
  try {
    transaction = await rpc.transaction(info.signature, 'confirmed')
  } catch (error) {
    logger.warn(
      { signature: info.signature, err: error },
      'unconfirmed solana transaction not readable'
    )
    return null
  }
  if (!transaction) return null // the node lags behind its own listing: next run
  let reading: Parsed
  try {
    const transfers = succeeded(transaction)
      ? readTransfers(transaction, tokenAccountOwners(transaction, known))
      : []
    reading = { transfers, timestamp: blockTimeMs(transaction) }
  } catch (error) {
    logger.warn(
      { signature: info.signature, err: error },
      'unconfirmed solana transaction could not be parsed'
    )
    reading = { transfers: [], timestamp: null }
  }
  if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!)
  parsed.set(info.signature, reading)
  return reading
}
