import type { Transaction } from '@ton/core'
import type { SeenAmount } from '#chains/chain_family'
import type Token from '#models/token'
import { fromBaseUnits } from '#support/text/money'
import {
  OP_INTERNAL_TRANSFER,
  operationOf,
  readBouncedJettons,
  readInternalTransfer,
} from '#plugins/ton/ton_messages'
import { referenceOf, type TonAccount } from '#plugins/ton/ton_transfers'
import { jettonsCredited, type JettonWalletAccount } from '#plugins/ton/ton_jetton_wallet'

/**
 * An incoming amount as the balance watch counts it, before its height is
 * set: `lt` is the logical time of the transaction on the account whose
 * balance it raised (the wallet for TON, the jetton wallet for a jetton),
 * the numbering that account's balance readings are placed in.
 */
export type SeenOnAccount = Omit<SeenAmount, 'height'> & { lt: bigint }

/**
 * The value of an internal message stays on the account unless the
 * message bounced back: a payment, but also the TON a jetton notification
 * forwards, the excess of our own jetton transfer, a bounce of ours, a
 * forged notification, a failed non-bounceable message. The account pays
 * its fees from its balance, so its balance rises by a little less.
 */
function valueKept(transaction: Transaction): boolean {
  const description = transaction.description
  return description.type === 'generic' && description.bouncePhase?.type !== 'ok'
}

/**
 * The TON one transaction of a watched wallet kept from its incoming
 * message, whatever the message was (see valueKept); null when none, or
 * when TON is not an enabled token. Dust included: the watch counts what
 * came in, not what could pay.
 */
export function seenOnWallet(
  transaction: Transaction,
  owner: TonAccount,
  native: Token | undefined
): SeenOnAccount | null {
  const message = transaction.inMessage
  if (
    !native ||
    !message ||
    message.info.type !== 'internal' ||
    !message.info.dest.equals(owner.address)
  )
    return null
  const value = message.info.value.coins
  if (value <= 0n || !valueKept(transaction)) return null
  return {
    reference: referenceOf(owner.address, transaction),
    position: 'in',
    to: owner.stored,
    contract: null,
    amount: fromBaseUnits(value, native.decimals),
    lt: transaction.lt,
  }
}

/**
 * The jettons one transaction of a watched wallet's jetton wallet added
 * to its balance: an internal_transfer it accepted (notified to the owner
 * or not, from whoever sent it: the balance rose either way), or one of
 * its own transfers or burns that bounced back. Null when the balance did
 * not rise or the amount cannot be read (such a transaction is reported
 * as unreadable, and a rise it made stays unexplained).
 */
export function seenOnJettonWallet(
  transaction: Transaction,
  wallet: JettonWalletAccount
): SeenOnAccount | null {
  const message = transaction.inMessage
  if (!message || message.info.type !== 'internal' || !message.info.dest.equals(wallet.address))
    return null
  if (!jettonsCredited(transaction)) return null
  let units: bigint | null = null
  if (message.info.bounced) {
    units = readBouncedJettons(message.body)
  } else if (operationOf(message.body) === OP_INTERNAL_TRANSFER) {
    try {
      units = readInternalTransfer(message.body).amount
    } catch {
      units = null
    }
  }
  if (units === null || units <= 0n) return null
  return {
    reference: referenceOf(wallet.address, transaction),
    position: 'in',
    to: wallet.owner.stored,
    contract: wallet.token.contract,
    amount: fromBaseUnits(units, wallet.token.decimals),
    lt: transaction.lt,
  }
}
