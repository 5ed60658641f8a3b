import type { Address, Transaction } from '@ton/core'
import type Token from '#models/token'
import { fromBaseUnits } from '#support/text/money'
import {
  OP_INTERNAL_TRANSFER,
  OP_TRANSFER_NOTIFICATION,
  operationOf,
  readInternalTransfer,
} from '#plugins/ton/ton_messages'
import {
  NOTHING,
  referenceOf,
  type TonAccount,
  type TransactionReading,
  type TransferReading,
} from '#plugins/ton/ton_transfers'

/** A watched wallet's jetton wallet of one configured jetton. */
export type JettonWalletAccount = {
  address: Address
  owner: TonAccount
  token: Token
  master: Address
}

export type JettonWalletReading = TransactionReading & {
  /**
   * The credit notified the owner: the owner's transaction of that
   * notification is the transfer's one reference (`createdLt`: the
   * notification's creation lt, to locate it).
   */
  notified?: { createdLt: bigint }
}

/** The tokens stayed: the wallet's code ran and its actions were sent (else the message bounced back). */
export function jettonsCredited(transaction: Transaction): boolean {
  const description = transaction.description
  if (description.type !== 'generic' || description.aborted) return false
  if (description.bouncePhase?.type === 'ok') return false
  const compute = description.computePhase
  if (compute.type !== 'vm' || !compute.success) return false
  return description.actionPhase ? description.actionPhase.success : true
}

function notificationTo(
  transaction: Transaction,
  owner: Address
): { createdLt: bigint } | undefined {
  for (const message of transaction.outMessages.values()) {
    if (message.info.type !== 'internal' || !message.info.dest.equals(owner)) continue
    if (operationOf(message.body) === OP_TRANSFER_NOTIFICATION)
      return { createdLt: message.info.createdLt }
  }
  return undefined
}

/**
 * A jetton transfer as the merchant's jetton wallet received it: an
 * incoming `internal_transfer` it accepted. This is the only trace of a
 * transfer sent with `forward_ton_amount = 0` (the owner gets no
 * notification). One transfer has one reference, whichever message is
 * looked at: when the jetton wallet notified the owner, the owner's
 * notification transaction (reported by the owner's reading), else this
 * transaction. The sender must be the master (a mint) or the jetton
 * wallet the master gives for the `from` owner the message names; the
 * jetton wallet checks the same before crediting, so another sender means
 * a wallet code we do not know: reported as unreadable, never paid.
 */
export async function readJettonWalletTransaction(
  transaction: Transaction,
  wallet: JettonWalletAccount,
  reading: TransferReading
): Promise<JettonWalletReading> {
  const message = transaction.inMessage
  if (!message || message.info.type !== 'internal') return NOTHING
  const { info } = message
  if (info.bounced || !info.dest.equals(wallet.address)) return NOTHING
  if (operationOf(message.body) !== OP_INTERNAL_TRANSFER) return NOTHING

  const credited = jettonsCredited(transaction)
  const base = {
    reference: referenceOf(wallet.address, transaction),
    to: wallet.owner.stored,
    contract: wallet.token.contract,
    timestamp: transaction.now * 1000,
    confirmations: reading.confirmations,
    // A TON transaction has one incoming message: the transfer is the transaction's.
    position: 'in',
  }
  let body: ReturnType<typeof readInternalTransfer>
  try {
    body = readInternalTransfer(message.body)
  } catch (error) {
    if (!credited) return NOTHING
    const reason = `internal_transfer of ${wallet.token.symbol} unreadable: ${(error as Error).message}`
    return { ...NOTHING, unreadable: [{ ...base, reason }] }
  }
  const amount = fromBaseUnits(body.amount, wallet.token.decimals)
  if (!credited) return { ...NOTHING, transfers: [{ ...base, amount, success: false }] }

  const notified = notificationTo(transaction, wallet.owner.address)
  if (notified) return { ...NOTHING, notified }
  if (reading.isDust?.(wallet.token.contract, amount)) return { ...NOTHING, dust: 1 }

  const fromMaster = info.src.equals(wallet.master)
  let fromWallet = false
  if (!fromMaster && body.from !== null) {
    const senderWallet = await reading.jettonWalletOf(wallet.master, body.from)
    fromWallet = senderWallet.equals(info.src)
  }
  if (!fromMaster && !fromWallet) {
    const reason =
      `internal_transfer of ${body.amount} ${wallet.token.symbol} base units credited by ${info.src.toRawString()}, ` +
      `which is neither the master nor the jetton wallet of ${body.from?.toRawString() ?? 'its sender'}: not credited`
    return { ...NOTHING, unreadable: [{ ...base, reason }] }
  }
  return { ...NOTHING, transfers: [{ ...base, amount, success: true }] }
}
