import type { HttpContext } from '@adonisjs/core/http'
import merchantAuth, { signingHint } from '#services/merchant_auth'
import requestLimits from '#services/request_limits'
import orderService, { type CreatedOrder } from '#services/order_service'
import { withoutEmpty } from '#support/http/request_params'
import type { CompatParams } from '#plugins/compat/compat_params'
import { compatSignature } from '#plugins/compat/compat_signature'
import { compatOrderValidator } from '#plugins/compat/compat_validator'
import { resolveCompatTarget } from '#plugins/compat/compat_resolution'

/**
 * How a compat request is signed (EPay's MD5), for the merchant check: the
 * sign is compared with the one of the bytes sent, and a refusal says how
 * to sign over which of the request's fields (never the expected value).
 */
export function compatSigning(params: CompatParams) {
  return {
    field: 'sign',
    expected: (secret: string) => compatSignature(params.signable(), secret),
    hint: signingHint(
      'MD5 (32 lower-case hex characters), the key (the secret_key of the pid) appended directly to the signed string',
      params.texts(),
      ['sign', 'sign_type']
    ),
  }
}

/**
 * An order from an EPay request, the same for submit.php (page jump) and
 * mapi.php (API mode): the MD5 sign checked on the bytes sent, counted per
 * pid (failed signatures per client IP), then the fields, the token and
 * network resolution, the order.
 */
export async function createCompatOrder(
  ctx: HttpContext,
  params: CompatParams
): Promise<CreatedOrder> {
  const apiKey = await requestLimits.authenticateCreate(ctx, () =>
    merchantAuth.authenticate(params.texts(), ctx.request.ip(), compatSigning(params))
  )
  const fields = await ctx.request.validateUsing(compatOrderValidator, {
    data: withoutEmpty(params.texts()),
  })
  const target = await resolveCompatTarget(fields)

  return orderService.create({
    apiKey,
    orderId: fields.out_trade_no,
    currency: target.currency,
    amount: fields.money,
    token: target.token,
    network: target.network,
    notifyUrl: fields.notify_url,
    redirectUrl: fields.return_url,
    name: fields.name,
    paymentType: 'Compat',
    flavourType: fields.type,
  })
}
