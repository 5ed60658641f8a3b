import type { HttpContext } from '@adonisjs/core/http'
import vine from '@vinejs/vine'
import { OrderStatus } from '#models/order'
import { orderByTradeId } from '#services/order_lookup'
import switchService from '#services/switch_service'
import transferVerifier from '#services/transfer_verifier'
import paymentService from '#services/payment_service'
import { presentCashier } from '#services/order_presenter'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { readFlatParams, withoutEmpty } from '#support/request_params'
import { ok } from '#support/envelope'
import { networkField, tokenField } from '#validators/rules'

const switchValidator = vine.create({
  trade_id: vine.string().trim().maxLength(64),
  token: tokenField(),
  network: networkField(),
})

const submitValidator = vine.create({
  block_transaction_id: vine.string().trim().minLength(8).maxLength(255),
})

/** The payer's actions on an order: choose a target, report a payment. */
export default class PaymentTargetController {
  /** POST /pay/switch-network */
  async switch(ctx: HttpContext) {
    const fields = await switchValidator.validate(withoutEmpty(readFlatParams(ctx)))
    const order = await switchService.switch(fields.trade_id, { network: fields.network, token: fields.token })
    return ok(ctx, presentCashier(order))
  }

  /** POST /pay/submit-tx-hash/:trade_id */
  async submitTxHash(ctx: HttpContext) {
    const fields = await submitValidator.validate(withoutEmpty(readFlatParams(ctx)))
    const order = await orderByTradeId(ctx.params.trade_id)
    // Rules 1–4, before any chain call.
    if (order.isProviderOrder) {
      throw BusinessError.parameter('Provider orders are paid on the provider page; there is no hash to submit')
    }
    if (!order.isOnChain) {
      throw new BusinessError(ErrorCode.NOT_WAITING, 'Order is not waiting for payment: choose a network and token first')
    }
    if (order.status !== OrderStatus.WAITING) {
      throw new BusinessError(ErrorCode.NOT_WAITING, `Order is not waiting for payment (status ${order.status})`)
    }
    if (order.expirationTime <= Date.now()) {
      throw new BusinessError(ErrorCode.NOT_WAITING, 'Order is not waiting for payment: it has expired')
    }

    const transfer = await transferVerifier.verify(order, fields.block_transaction_id, 'submit')
    const outcome = await paymentService.markPaid(order.id, {
      reference: transfer.reference,
      source: 'submit',
      paidAt: transfer.timestamp,
    })
    return ok(ctx, {
      trade_id: outcome.order.tradeId,
      block_transaction_id: outcome.order.blockTransactionId,
      status: outcome.order.status,
    })
  }
}
