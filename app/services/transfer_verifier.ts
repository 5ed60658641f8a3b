import Chain from '#models/chain'
import Token from '#models/token'
import type Order from '#models/order'
import chainRegistry from '#chains/chain_registry'
import { rpcFor } from '#chains/chain_rpc'
import { RpcBudgetExhaustedError, RpcUnavailableError } from '#chains/rpc_pool'
import {
  BLOCK_TIME_SKEW_MS,
  TransferLookupError,
  type ObservedTransfer,
} from '#chains/chain_family'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { Decimal, toDecimalString } from '#support/text/money'
import { usedReference } from '#services/transfer_references'

/**
 * How strictly a reference is held to the order's life:
 * - `submit` (the payer's submit-tx-hash): made while the order was open;
 * - `admin` (orders:mark-paid repair): made after the order was created.
 */
export type VerificationMode = 'submit' | 'admin'

/**
 * A refusal that may not hold for long (the transaction is not yet
 * confirmed, the node cannot be reached, the verification budget is spent):
 * asking again later can succeed, so it is never answered from memory.
 */
export class PassingRefusal extends BusinessError {
  constructor(message: string) {
    super(ErrorCode.PARAMETER, message)
  }
}

/**
 * Checks a transaction reference against an on-chain order: the chain
 * plugin reads the facts, this decides. Every refusal says what is wrong
 * (not found, failed, wrong recipient, wrong token, wrong amount, too early
 * or late, not yet confirmed). Returns the matching transfer, whose
 * reference is canonical.
 */
export class TransferVerifier {
  /**
   * `position` (an unmatched payment being assigned) names the transfer of
   * the transaction to check; without it, the transaction's transfers that
   * fit the order are considered, one no other order was paid with first
   * (one transaction may pay several orders).
   */
  async verify(
    order: Order,
    reference: string,
    mode: VerificationMode,
    position?: string
  ): Promise<ObservedTransfer> {
    const chain = await Chain.findBy('network', order.network)
    if (!chain) throw BusinessError.parameter(`Unknown network ${order.network}`)
    // No enabled plugin brings the family: nothing can read the chain.
    const family = chainRegistry.find(chain.family)
    if (!family?.verifyReference) {
      throw BusinessError.parameter(
        `Transaction verification is not available for ${order.network}`
      )
    }
    const tokens = await Token.query().where('network', order.network)
    const token = tokens.find((entry) => entry.symbol === order.token)
    if (!token) throw BusinessError.parameter(`${order.token} is not a token of ${order.network}`)

    // A payer's check draws on the verification budget, never on the scanners'.
    const rpc = await rpcFor(chain, mode === 'submit' ? { purpose: 'verify' } : {})
    let transfers: ObservedTransfer[]
    try {
      transfers = await family.verifyReference(reference.trim(), { chain, tokens, order, rpc })
    } catch (error) {
      if (error instanceof TransferLookupError)
        throw BusinessError.parameter(`Transaction check failed: ${error.message}`)
      if (
        error instanceof RpcBudgetExhaustedError ||
        (error instanceof RpcUnavailableError && error.cause instanceof RpcBudgetExhaustedError)
      ) {
        throw new PassingRefusal(
          `Transaction check failed: too many transaction checks on ${order.network} today; the payment is still detected by the scanner, or try again later`
        )
      }
      if (error instanceof RpcUnavailableError) {
        throw new PassingRefusal(
          `Transaction check failed: the ${order.network} node cannot be reached now, try again`
        )
      }
      throw error
    }
    if (transfers.length === 0)
      throw BusinessError.parameter('Transaction check failed: the transaction transfers nothing')

    const toOrder = transfers.filter((transfer) => transfer.to === order.receiveAddress)
    if (toOrder.length === 0) {
      throw BusinessError.parameter(
        `Transaction check failed: it pays ${transfers[0].to}, not ${order.receiveAddress}`
      )
    }
    const ofToken = toOrder.filter((transfer) => transfer.contract === token.contract)
    if (ofToken.length === 0) {
      throw BusinessError.parameter(`Transaction check failed: it does not transfer ${order.token}`)
    }
    const succeeded = ofToken.filter((entry) => entry.success)
    if (succeeded.length === 0)
      throw BusinessError.parameter('Transaction check failed: the transaction failed on chain')
    const expected = new Decimal(order.actualAmount)
    const fitting = succeeded.filter(
      (entry) =>
        new Decimal(entry.amount).eq(expected) &&
        (position === undefined || entry.position === position)
    )
    const transfer = await this.#unused(order, fitting)
    if (!transfer) {
      throw BusinessError.parameter(
        `Transaction check failed: it transfers ${toDecimalString(succeeded[0].amount)} ${order.token}, the order expects ${toDecimalString(expected)}`
      )
    }
    if (transfer.timestamp + BLOCK_TIME_SKEW_MS < order.createdAt) {
      throw BusinessError.parameter(
        'Transaction check failed: it was made before the order was created'
      )
    }
    if (mode === 'submit' && transfer.timestamp > order.expirationTime) {
      throw BusinessError.parameter('Transaction check failed: it was made after the order expired')
    }
    if (transfer.confirmations < chain.confirmations) {
      throw new PassingRefusal(
        `Transaction check failed: not yet confirmed (${transfer.confirmations} of ${chain.confirmations} confirmations)`
      )
    }
    return transfer
  }

  /** Of the transfers that fit the order, the first that paid no other order (else the first: the payment path answers 10007). */
  async #unused(order: Order, fitting: ObservedTransfer[]): Promise<ObservedTransfer | undefined> {
    for (const transfer of fitting) {
      const used = await usedReference(order.network, transfer.reference, transfer.position)
      if (!used || used.order_id === order.id) return transfer
    }
    return fitting[0]
  }
}

const transferVerifier = new TransferVerifier()
export default transferVerifier
