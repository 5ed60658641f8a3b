import { Address, type Cell, type Transaction } from '@ton/core'
import type { ObservedTransfer } from '#chains/chain_family'
import type Token from '#models/token'
import { fromBaseUnits } from '#support/money'
import { canonicalTonReference } from '#plugins/ton/ton_references'

/** TEP-74 operation codes this plugin reads. */
export const OP_TRANSFER_NOTIFICATION = 0x7362d09c
export const OP_EXCESSES = 0xd53276db

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

/** transfer_notification query_id:uint64 amount:Coins sender:MsgAddress forward_payload:(Either Cell ^Cell) */
function notifiedAmount(body: Cell): bigint | null {
  try {
    const slice = body.beginParse()
    if (slice.loadUint(32) !== OP_TRANSFER_NOTIFICATION) return null
    slice.loadUintBig(64)
    const amount = slice.loadCoins()
    slice.loadAddressAny()
    return amount
  } catch {
    return null
  }
}

function operationOf(body: Cell): number | null {
  const slice = body.beginParse()
  return slice.remainingBits >= 32 ? slice.loadUint(32) : null
}

/**
 * The incoming transfers one transaction of `account` made:
 * - a jetton: a transfer_notification sent by the account's own jetton
 *   wallet of a configured master. Only that wallet can send it (its
 *   address derives from the master's code), and it sends it only after
 *   crediting the tokens, so the transfer succeeded whatever the account's
 *   own transaction did (an undeployed wallet shows `aborted` yet holds the
 *   tokens). A notification from anyone else is ignored, TON value included.
 * - TON: any other internal message with value, unless it is a bounce of
 *   ours or the excess of a jetton transfer we made.
 */
export async function transfersOf(
  transaction: Transaction,
  account: TonAccount,
  reading: TransferReading
): Promise<ObservedTransfer[]> {
  const message = transaction.inMessage
  if (!message || message.info.type !== 'internal') return []
  const { info } = message
  if (info.bounced || !info.dest.equals(account.address)) return []

  const base = {
    reference: canonicalTonReference(account.address, transaction.lt, transaction.hash().toString('hex')),
    to: account.stored,
    timestamp: transaction.now * 1000,
    confirmations: reading.confirmations,
  }
  const operation = operationOf(message.body)

  if (operation === OP_TRANSFER_NOTIFICATION) {
    const amount = notifiedAmount(message.body)
    if (amount === null) return []
    for (const token of reading.tokens) {
      if (token.contract === null) continue
      const wallet = await reading.jettonWalletOf(Address.parse(token.contract), account.address)
      if (!wallet.equals(info.src)) continue
      return [{ ...base, contract: token.contract, amount: fromBaseUnits(amount, token.decimals), success: true }]
    }
    return [] // not from our jetton wallet of a known jetton: forged or another jetton
  }
  if (operation === OP_EXCESSES) return []

  const native = reading.tokens.find((token) => token.contract === null)
  const value = info.value.coins
  if (!native || value <= 0n) return []
  return [
    { ...base, contract: null, amount: fromBaseUnits(value, native.decimals), success: valueCredited(transaction) },
  ]
}
