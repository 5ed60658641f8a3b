import type { HttpContext } from '@adonisjs/core/http'
import merchantAuth from '#services/merchant_auth'
import requestLimits from '#services/request_limits'
import orderService from '#services/order_service'
import { presentCreated, presentQueried } from '#services/order_presenter'
import { createOrderValidator } from '#validators/create_order_validator'
import { queryOrderValidator } from '#validators/query_order_validator'
import Order from '#models/order'
import { ErrorCode } from '#exceptions/error_codes'
import BusinessError from '#exceptions/business_error'
import callbackFormats from '#callbacks/callback_format'
import { readFlatParams, withoutEmpty } from '#support/http/request_params'
import { signingHint } from '#services/merchant_auth'
import { nativeSignature, type SignableParams } from '#support/crypto/signing'
import { ok } from '#support/http/envelope'
import pluginRegistry from '#plugin_host/plugin_registry'

export default class NativeOrdersController {
  /** POST /payments/native/v1/order/create-transaction */
  async create(ctx: HttpContext) {
    const params = readFlatParams(ctx)
    const apiKey = await requestLimits.authenticateCreate(ctx, () =>
      merchantAuth.authenticate(params, ctx.request.ip(), nativeSigning(params))
    )

    const fields = await ctx.request.validateUsing(createOrderValidator, {
      data: withoutEmpty(params),
    })
    // The format serving the payment type (any case) writes it as its own: `native` → Native.
    const asked = fields.payment_type ?? 'native'
    const format = callbackFormats.forPaymentType(asked)
    // An order must be able to tell its merchant once paid: no loaded format, no order.
    if (!format) {
      const known = pluginRegistry.paymentTypes().find((type) => type.toLowerCase() === asked)
      throw BusinessError.parameter(
        `payment_type ${known ?? asked} is not available: its plugin is turned off on this gateway`
      )
    }
    const paymentType = format.paymentType
    const refusal = format.refusesKey?.(apiKey)
    if (refusal) throw BusinessError.parameter(refusal)

    const order = await orderService.create({
      apiKey,
      orderId: fields.order_id,
      currency: fields.currency,
      amount: fields.amount,
      token: fields.token,
      network: fields.network,
      notifyUrl: fields.notify_url,
      redirectUrl: fields.redirect_url,
      name: fields.name,
      paymentType,
    })
    return ok(ctx, presentCreated(order))
  }

  /**
   * POST /payments/native/v1/order/query: "is my order paid?", signed like
   * create, limited per pid (rate_limit.query_per_minute, apart from the
   * creates). An order of another pid is 10008, like one
   * that does not exist: a merchant never learns of another's orders.
   */
  async query(ctx: HttpContext) {
    const params = readFlatParams(ctx)
    const apiKey = await requestLimits.authenticateMerchant(ctx, 'query', () =>
      merchantAuth.authenticate(params, ctx.request.ip(), nativeSigning(params))
    )
    const fields = await ctx.request.validateUsing(queryOrderValidator, {
      data: withoutEmpty(params),
    })
    const query = Order.query().where('pid', apiKey.pid).whereNull('parent_id')
    if (fields.trade_id) query.where('trade_id', fields.trade_id)
    else query.where('order_id', fields.order_id!)
    const order = await query.first()
    if (!order) throw new BusinessError(ErrorCode.ORDER_NOT_FOUND)
    const child = await Order.query().where('parent_id', order.id).first()
    return ok(ctx, presentQueried(order, child))
  }
}

/**
 * How native requests are signed, for the check and for the 401's hint
 * (the algorithm and the fields the gateway signed, never the value it
 * expected): a merchant moving from an MD5-signing gateway learns why.
 */
function nativeSigning(params: SignableParams) {
  return {
    field: 'signature',
    expected: (secret: string) => nativeSignature(params, secret),
    hint: signingHint(
      'HMAC-SHA256 (64 lower-case hex characters) keyed with the secret_key of the pid',
      params,
      ['signature']
    ),
  }
}
