import { Address, type Transaction } from '@ton/core'
import { TransferLookupError, type ObservedTransfer, type VerificationContext } from '#chains/chain_family'
import { parseTonReference } from '#plugins/ton/ton_references'
import { incomingMessageHash, transfersOf } from '#plugins/ton/ton_transfers'
import { TON_PAGE_SIZE } from '#plugins/ton/ton_scan'
import { withToncenter } from '#plugins/ton/toncenter_client'

/** A bare hash is looked for among this many recent transactions at most... */
const HASH_SEARCH_PAGES = 4
/** ...made at most this long before the order (older ones cannot pay it anyway). */
const HASH_SEARCH_BEFORE_ORDER_MS = 24 * 3600_000

type HashCandidate = { hash: string; inMessageHash: string | null }

/**
 * The one transaction a bare hash names: its own hash, or the hash of its
 * incoming message (what explorers show for the transfer to us). None or
 * several: the payer must give the lt:hash form.
 */
export function pickByHash<T extends HashCandidate>(candidates: T[], hash: string, where: string): T {
  const matching = candidates.filter((candidate) => candidate.hash === hash || candidate.inMessageHash === hash)
  if (matching.length === 1) return matching[0]
  if (matching.length === 0) {
    throw new TransferLookupError(`transaction ${hash} not found among the recent transactions of ${where}`)
  }
  throw new TransferLookupError(
    `the hash ${hash} is ambiguous: ${matching.length} transactions of ${where} match it; ` +
      'give the reference as <lt>:<hash> or ton:<address>:<lt>:<hash>'
  )
}

async function searchByHash(context: VerificationContext, account: Address, hash: string, where: string) {
  const oldest = context.order.createdAt - HASH_SEARCH_BEFORE_ORDER_MS
  const candidates: { transaction: Transaction; hash: string; inMessageHash: string | null }[] = []
  let before: { lt: string; hash: string } | undefined
  for (let page = 0; page < HASH_SEARCH_PAGES; page++) {
    const transactions = await withToncenter(context, (client) =>
      client.transactions(account, { limit: TON_PAGE_SIZE, before })
    )
    for (const transaction of transactions) {
      candidates.push({
        transaction,
        hash: transaction.hash().toString('hex'),
        inMessageHash: incomingMessageHash(transaction),
      })
    }
    const last = transactions.at(-1)
    if (!last || transactions.length < TON_PAGE_SIZE || last.now * 1000 < oldest) break
    before = { lt: last.lt.toString(), hash: last.hash().toString('hex') }
  }
  return pickByHash(candidates, hash, where).transaction
}

/**
 * Reads the transfers of the transaction a reference names (submit-tx-hash,
 * orders:mark-paid). The core checks them against the order.
 */
export async function verifyTonReference(
  reference: string,
  context: VerificationContext,
  storedForm: (address: Address) => string
): Promise<ObservedTransfer[]> {
  const parsed = parseTonReference(reference)
  const orderAccount = Address.parse(context.order.receiveAddress)
  const account = parsed.kind === 'canonical' ? parsed.account : orderAccount
  const stored = account.equals(orderAccount) ? context.order.receiveAddress : storedForm(account)

  let transaction: Transaction
  if (parsed.kind === 'hash') {
    transaction = await searchByHash(context, account, parsed.hash, stored)
  } else {
    const found = await withToncenter(context, (client) => client.transaction(account, parsed.lt, parsed.hash))
    if (!found) throw new TransferLookupError(`transaction ${parsed.lt}:${parsed.hash} of ${stored} not found`)
    transaction = found
  }

  return transfersOf(transaction, { address: account, stored }, {
    tokens: context.tokens,
    confirmations: context.chain.confirmations,
    jettonWalletOf: (master, owner) => withToncenter(context, (client) => client.jettonWallet(master, owner)),
  })
}
