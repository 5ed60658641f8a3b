import type { HttpContext } from '@adonisjs/core/http'
import switchService from '#services/switch_service'
import txHashSubmission from '#services/tx_hash_submission'
import { presentCashier } from '#services/order_presenter'
import { switchNetworkValidator } from '#validators/switch_network_validator'
import { submitTxHashValidator } from '#validators/submit_tx_hash_validator'
import { readFlatParams, withoutEmpty } from '#support/http/request_params'
import { ok } from '#support/http/envelope'
import requestLimits from '#services/request_limits'

/** The payer's actions on an order: choose a target, report a payment. */
export default class PaymentTargetController {
  /** POST /pay/switch-network */
  async switch(ctx: HttpContext) {
    const fields = await ctx.request.validateUsing(switchNetworkValidator, {
      data: withoutEmpty(readFlatParams(ctx)),
    })
    const order = await switchService.switch(fields.trade_id, {
      network: fields.network,
      token: fields.token,
    })
    return ok(ctx, presentCashier(order))
  }

  /** POST /pay/submit-tx-hash/:trade_id */
  async submitTxHash(ctx: HttpContext) {
    const fields = await ctx.request.validateUsing(submitTxHashValidator, {
      data: withoutEmpty(readFlatParams(ctx)),
    })
    // Per order, on top of the cashier's per-IP limit: a trade_id asked from many IPs.
    await requestLimits.consumeSubmission(ctx, ctx.params.trade_id)
    const order = await txHashSubmission.submit(ctx.params.trade_id, fields.block_transaction_id)
    return ok(ctx, {
      trade_id: order.tradeId,
      block_transaction_id: order.blockTransactionId,
      status: order.status,
    })
  }
}
