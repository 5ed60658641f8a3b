import { Address } from '@ton/core'
import {
  TransferLookupError,
  type ObservedTransfer,
  type VerificationContext,
} from '#chains/chain_family'
import type Token from '#models/token'
import { parseTonReference, type TonReference } from '#plugins/ton/ton_references'
import {
  incomingMessageHash,
  jettonTokens,
  readWalletTransaction,
  type TransactionReading,
  type TransferReading,
} from '#plugins/ton/ton_transfers'
import {
  readJettonWalletTransaction,
  type JettonWalletAccount,
} from '#plugins/ton/ton_jetton_wallet'
import { TON_PAGE_SIZE } from '#plugins/ton/ton_scan'
import {
  withToncenter,
  type ListedTransaction,
  type TransactionPoint,
} from '#plugins/ton/toncenter_client'

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
export function pickByHash<T extends HashCandidate>(
  candidates: T[],
  hash: string,
  where: string
): T {
  const matching = candidates.filter(
    (candidate) => candidate.hash === hash || candidate.inMessageHash === hash
  )
  if (matching.length === 1) return matching[0]
  if (matching.length === 0) {
    throw new TransferLookupError(
      `transaction ${hash} not found among the recent transactions of ${where}`
    )
  }
  throw new TransferLookupError(
    `the hash ${hash} is ambiguous: ${matching.length} transactions of ${where} match it; ` +
      'give the reference as <lt>:<hash> or ton:<address>:<lt>:<hash>'
  )
}

async function recentCandidates(context: VerificationContext, account: Address) {
  const oldest = context.order.createdAt - HASH_SEARCH_BEFORE_ORDER_MS
  const candidates: (HashCandidate & { entry: ListedTransaction })[] = []
  let before: TransactionPoint | undefined
  for (let page = 0; page < HASH_SEARCH_PAGES; page++) {
    const entries = await withToncenter(context, (client) =>
      client.transactions(account, { limit: TON_PAGE_SIZE, before })
    )
    for (const entry of entries) {
      const inMessageHash = entry.transaction ? incomingMessageHash(entry.transaction) : null
      candidates.push({ entry, hash: entry.point.hash, inMessageHash })
    }
    const last = entries.at(-1)
    if (!last || entries.length < TON_PAGE_SIZE || last.now * 1000 < oldest) break
    before = last.point
  }
  return candidates
}

/** Where a transaction was found: a watched wallet (or any account), or the order wallet's jetton wallet. */
type Found = { entry: ListedTransaction; account: Address; jettonWallet?: JettonWalletAccount }

function isNotFound(error: unknown) {
  return error instanceof TransferLookupError && /not found/.test(error.message)
}

class TonVerification {
  readonly owner: { address: Address; stored: string }
  readonly reading: TransferReading

  constructor(
    readonly context: VerificationContext,
    readonly storedForm: (address: Address) => string
  ) {
    this.owner = {
      address: Address.parse(context.order.receiveAddress),
      stored: context.order.receiveAddress,
    }
    this.reading = {
      tokens: context.tokens,
      confirmations: context.chain.confirmations,
      jettonWalletOf: (master, owner) =>
        withToncenter(context, (client) => client.jettonWallet(master, owner)),
    }
  }

  /** The order wallet's jetton wallet of `token`. */
  async jettonWallet(token: Token): Promise<JettonWalletAccount> {
    const master = Address.parse(token.contract!)
    const address = await this.reading.jettonWalletOf(master, this.owner.address)
    return { address, owner: this.owner, token, master }
  }

  /** The order's own jetton wallet (its token is a jetton), else null. */
  async orderJettonWallet(): Promise<JettonWalletAccount | null> {
    const token = this.context.tokens.find((entry) => entry.symbol === this.context.order.token)
    return token?.contract ? this.jettonWallet(token) : null
  }

  async byId(account: Address, lt: bigint, hash: string): Promise<ListedTransaction> {
    const found = await withToncenter(this.context, (client) =>
      client.transaction(account, lt, hash)
    )
    if (!found) {
      throw new TransferLookupError(
        `transaction ${lt}:${hash} of ${this.storedForm(account)} not found`
      )
    }
    return found
  }

  async byHash(account: Address, hash: string): Promise<ListedTransaction> {
    return pickByHash(await recentCandidates(this.context, account), hash, this.storedForm(account))
      .entry
  }

  /**
   * The transaction a reference names. `<lt>:<hash>` and a bare hash name
   * one of the order wallet's transactions, or else of its jetton wallet
   * of the order's jetton (where a transfer without notification shows).
   */
  async locate(reference: TonReference): Promise<Found> {
    if (reference.kind === 'canonical') {
      const account = new Address(reference.account.workChain, reference.account.hash)
      const entry = await this.byId(account, reference.lt, reference.hash)
      if (!account.equals(this.owner.address)) {
        for (const token of jettonTokens(this.context.tokens)) {
          const wallet = await this.jettonWallet(token)
          if (wallet.address.equals(account)) return { entry, account, jettonWallet: wallet }
        }
      }
      return { entry, account }
    }
    const find = (account: Address) =>
      reference.kind === 'lt-hash'
        ? this.byId(account, reference.lt, reference.hash)
        : this.byHash(account, reference.hash)
    try {
      return { entry: await find(this.owner.address), account: this.owner.address }
    } catch (error) {
      const wallet = isNotFound(error) ? await this.orderJettonWallet() : null
      if (!wallet) throw error
      try {
        return { entry: await find(wallet.address), account: wallet.address, jettonWallet: wallet }
      } catch (again) {
        if (isNotFound(again)) throw error
        throw again
      }
    }
  }

  async read(found: Found): Promise<ObservedTransfer[]> {
    const { entry } = found
    if (!entry.transaction)
      throw new TransferLookupError(`the transaction cannot be read (${entry.unreadable})`)
    if (!found.jettonWallet) {
      const stored = found.account.equals(this.owner.address)
        ? this.owner.stored
        : this.storedForm(found.account)
      return this.#transfers(
        await readWalletTransaction(
          entry.transaction,
          { address: found.account, stored },
          this.reading
        )
      )
    }
    const wallet = found.jettonWallet
    const reading = await readJettonWalletTransaction(entry.transaction, wallet, this.reading)
    if (!reading.notified) return this.#transfers(reading)
    // The owner was notified: its notification transaction is the transfer's one reference.
    const notification = await withToncenter(this.context, (client) =>
      client.resultTransaction(wallet.address, this.owner.address, reading.notified!.createdLt)
    )
    if (!notification?.transaction) {
      throw new TransferLookupError(
        `the jetton transfer notified ${this.owner.stored}, whose transaction of it is not found yet; try again later`
      )
    }
    return this.#transfers(
      await readWalletTransaction(notification.transaction, this.owner, this.reading)
    )
  }

  #transfers(reading: TransactionReading): ObservedTransfer[] {
    if (reading.transfers.length === 0 && reading.unreadable.length > 0) {
      throw new TransferLookupError(
        `the transaction cannot be read: ${reading.unreadable[0].reason}`
      )
    }
    return reading.transfers
  }
}

/**
 * Reads the transfers of the transaction a reference names (submit-tx-hash,
 * orders:mark-paid): a transaction of the order's wallet, or of its jetton
 * wallet (a jetton transfer; when that one notified the wallet, the
 * notification's transaction is returned, the transfer's one canonical
 * reference). The core checks them against the order.
 */
export async function verifyTonReference(
  reference: string,
  context: VerificationContext,
  storedForm: (address: Address) => string
): Promise<ObservedTransfer[]> {
  const verification = new TonVerification(context, storedForm)
  return verification.read(await verification.locate(parseTonReference(reference)))
}
