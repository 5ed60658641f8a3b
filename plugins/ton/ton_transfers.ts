import { Address, type Transaction } from '@ton/core'
import type { ObservedTransfer, UnreadableTransfer } from '#chains/chain_family'
import type Token from '#models/token'
import { fromBaseUnits } from '#support/text/money'
import { canonicalTonReference } from '#plugins/ton/ton_references'
import {
  OP_EXCESSES,
  OP_TRANSFER_NOTIFICATION,
  operationOf,
  readNotification,
} from '#plugins/ton/ton_messages'

/** The account whose transaction is read, and its address in stored form. */
export type TonAccount = { address: Address; stored: string }

/** What reading transactions needs besides the transaction itself. */
export type TransferReading = {
  /** Tokens of the network: contract null = TON, else a jetton master (stored form). */
  tokens: Token[]
  /** Reported for every transaction found through the API (they are final). */
  confirmations: number
  /** The jetton wallet `owner` has for the jetton of `master` (the master's get_wallet_address). */
  jettonWalletOf: (master: Address, owner: Address) => Promise<Address>
  /** Scan only: transfers below every watched order's amount, dropped before any further request. */
  isDust?: (contract: string | null, amount: string) => boolean
}

/** What one transaction gave: transfers, or why it could not be read, and the dust it dropped. */
export type TransactionReading = {
  transfers: ObservedTransfer[]
  unreadable: UnreadableTransfer[]
  dust: number
}

export const NOTHING: TransactionReading = Object.freeze({
  transfers: [],
  unreadable: [],
  dust: 0,
}) as TransactionReading

export function jettonTokens(tokens: Token[]): Token[] {
  return tokens.filter((token) => token.contract !== null)
}

/**
 * Whether the value of a transaction's incoming message stayed on the
 * account. A message the account bounced went back (bounce phase ok); a
 * compute or action phase that failed is a failed payment, even when a
 * non-bounceable message's value stayed (conservative: an operator can
 * still mark such an order paid). A compute phase skipped because the
 * account has no code yet (an undeployed wallet, non-bounceable message)
 * is a plain credit.
 */
export function valueCredited(transaction: Transaction): boolean {
  const description = transaction.description
  if (description.type !== 'generic') return false
  if (description.bouncePhase?.type === 'ok') return false
  const compute = description.computePhase
  if (compute.type === 'skipped') return true
  if (!compute.success) return false
  return description.actionPhase ? description.actionPhase.success : true
}

/** Hash (lower-case hex) of the incoming message cell, as explorers show it. */
export function incomingMessageHash(transaction: Transaction): string | null {
  const messages = transaction.raw.refs[0]?.beginParse()
  if (!messages || !messages.loadBit()) return null
  return messages.loadRef().hash().toString('hex')
}

export function referenceOf(account: Address, transaction: Transaction) {
  return canonicalTonReference(account, transaction.lt, transaction.hash().toString('hex'))
}

/** The token whose jetton wallet of `owner` is `sender`, null when none is. */
async function tokenSentBy(
  sender: Address,
  owner: Address,
  reading: TransferReading
): Promise<Token | null> {
  for (const token of jettonTokens(reading.tokens)) {
    const wallet = await reading.jettonWalletOf(Address.parse(token.contract!), owner)
    if (wallet.equals(sender)) return token
  }
  return null
}

/**
 * The incoming transfers one transaction of a watched wallet made:
 * - a jetton: a transfer_notification sent by the account's own jetton
 *   wallet of a configured master. Only that wallet can send it (its
 *   address derives from the master's code), and it sends it only after
 *   crediting the tokens, so the transfer succeeded whatever the account's
 *   own transaction did (an undeployed wallet shows `aborted` yet holds the
 *   tokens). A notification from anyone else is ignored, TON value included.
 *   Such a transfer's reference is this transaction; the jetton wallet's
 *   own transaction of it is never reported (see ton_jetton_wallet.ts).
 * - TON: any other internal message with value, unless it is a bounce of
 *   ours or the excess of a jetton transfer we made.
 * Amounts below every watched order (`isDust`) are counted and dropped
 * before any request; a notification of our jetton wallet whose body
 * cannot be read is reported as unreadable.
 */
export async function readWalletTransaction(
  transaction: Transaction,
  account: TonAccount,
  reading: TransferReading
): Promise<TransactionReading> {
  const message = transaction.inMessage
  if (!message || message.info.type !== 'internal') return NOTHING
  const { info } = message
  if (info.bounced || !info.dest.equals(account.address)) return NOTHING

  const base = {
    reference: referenceOf(account.address, transaction),
    to: account.stored,
    timestamp: transaction.now * 1000,
    confirmations: reading.confirmations,
    // A TON transaction has one incoming message: the transfer is the transaction's.
    position: 'in',
  }
  const operation = operationOf(message.body)

  if (operation === OP_TRANSFER_NOTIFICATION) {
    let amount: bigint
    try {
      amount = readNotification(message.body).amount
    } catch (error) {
      const token = await tokenSentBy(info.src, account.address, reading)
      if (!token) return NOTHING // not from our jetton wallet: a forgery, nothing was credited
      const reason = `transfer_notification of ${token.symbol} unreadable: ${(error as Error).message}`
      return { ...NOTHING, unreadable: [{ ...base, contract: token.contract, reason }] }
    }
    const jettons = jettonTokens(reading.tokens)
    const isDust = reading.isDust
    if (
      isDust &&
      jettons.length > 0 &&
      jettons.every((token) => isDust(token.contract, fromBaseUnits(amount, token.decimals)))
    ) {
      return { ...NOTHING, dust: 1 }
    }
    const token = await tokenSentBy(info.src, account.address, reading)
    if (!token) return NOTHING // not from our jetton wallet of a known jetton: forged or another jetton
    const units = fromBaseUnits(amount, token.decimals)
    if (isDust?.(token.contract, units)) return { ...NOTHING, dust: 1 }
    return {
      ...NOTHING,
      transfers: [{ ...base, contract: token.contract, amount: units, success: true }],
    }
  }
  if (operation === OP_EXCESSES) return NOTHING

  const native = reading.tokens.find((token) => token.contract === null)
  const value = info.value.coins
  if (!native || value <= 0n) return NOTHING
  const amount = fromBaseUnits(value, native.decimals)
  if (reading.isDust?.(null, amount)) return { ...NOTHING, dust: 1 }
  return {
    ...NOTHING,
    transfers: [{ ...base, contract: null, amount, success: valueCredited(transaction) }],
  }
}
