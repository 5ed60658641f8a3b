import { Address, type Cell } from '@ton/core'

/** TEP-74 operation codes this plugin reads. */
export const OP_TRANSFER_NOTIFICATION = 0x7362d09c
export const OP_INTERNAL_TRANSFER = 0x178d4519
export const OP_EXCESSES = 0xd53276db
export const OP_BURN_NOTIFICATION = 0x7bdd97de
/** The prefix of a bounced message's body (the first 256 bits of the original body follow). */
export const BOUNCED_PREFIX = 0xffffffff

/** The operation code of a message body, null when it has none (a plain transfer). */
export function operationOf(body: Cell): number | null {
  const slice = body.beginParse()
  return slice.remainingBits >= 32 ? slice.loadUint(32) : null
}

/**
 * transfer_notification query_id:uint64 amount:Coins sender:MsgAddress
 * forward_payload:(Either Cell ^Cell). Throws when the body does not hold
 * that much.
 */
export function readNotification(body: Cell): { amount: bigint } {
  const slice = body.beginParse()
  if (slice.loadUint(32) !== OP_TRANSFER_NOTIFICATION)
    throw new Error('not a transfer_notification')
  slice.loadUintBig(64)
  const amount = slice.loadCoins()
  slice.loadAddressAny()
  return { amount }
}

/**
 * internal_transfer query_id:uint64 amount:Coins from:MsgAddress
 * response_address:MsgAddress forward_ton_amount:Coins forward_payload:...
 * `from` is the owner of the sending jetton wallet (null: an external or
 * absent address, which no jetton wallet sends).
 */
export function readInternalTransfer(body: Cell): {
  amount: bigint
  from: Address | null
  forwardTonAmount: bigint
} {
  const slice = body.beginParse()
  if (slice.loadUint(32) !== OP_INTERNAL_TRANSFER) throw new Error('not an internal_transfer')
  slice.loadUintBig(64)
  const amount = slice.loadCoins()
  const from = slice.loadAddressAny()
  slice.loadAddressAny()
  const forwardTonAmount = slice.loadCoins()
  return { amount, from: Address.isAddress(from) ? from : null, forwardTonAmount }
}

/**
 * The jettons a jetton wallet takes back from a bounced message of its
 * own: an internal_transfer or a burn_notification that the receiver
 * refused (TEP-74 wallets add the amount back to their balance). Null for
 * any other bounced message or a body too short to say.
 */
export function readBouncedJettons(body: Cell): bigint | null {
  const slice = body.beginParse()
  if (slice.remainingBits < 64 || slice.loadUint(32) !== BOUNCED_PREFIX) return null
  const operation = slice.loadUint(32)
  if (operation !== OP_INTERNAL_TRANSFER && operation !== OP_BURN_NOTIFICATION) return null
  try {
    slice.loadUintBig(64)
    return slice.loadCoins()
  } catch {
    return null
  }
}
