import type { HttpContext } from '@adonisjs/core/http'
import { createHash } from 'node:crypto'
import type ApiKey from '#models/api_key'
import merchantAuth from '#services/merchant_auth'
import requestLimits from '#services/request_limits'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { withoutEmpty } from '#support/http/request_params'
import { CompatParams } from '#plugins/compat/compat_params'
import { compatSigning } from '#plugins/compat/compat_order_creation'
import {
  compatOrderListValidator,
  compatOrderQueryValidator,
} from '#plugins/compat/compat_validator'
import compatOrderQuery, { presentEpayOrder } from '#plugins/compat/compat_order_query'
import { answerEpay, refuseEpay, type EpayAnswer } from '#plugins/compat/epay_answer'

/** One answer for an unknown pid, a disabled key, an IP not allowed and a wrong key. */
export const API_AUTH_FAILED_MESSAGE = 'The pid and key do not match an active API key'

export const REFUNDS_UNSUPPORTED_MESSAGE =
  'Refunds are not supported: this gateway holds no private keys and cannot send funds back; refund the payer from your own wallet'

const ACTS = 'act=order, act=orders and act=refund'

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/**
 * GET|POST api.php: EPay's merchant API, as the SDK calls it after its
 * base URL (`api.php?act=order&pid=…&key=…&trade_no=…`):
 * - act=order: one order by trade_no or out_trade_no;
 * - act=orders: the pid's latest orders, `limit` (≤ 50) per `page`;
 * - act=refund: always refused (the gateway never holds private keys).
 * The merchant proves itself with `key` (its API key's secret, EPay's
 * merchant key) or, instead, an MD5 `sign` of the parameters.
 */
export default class CompatApiController {
  async handle(ctx: HttpContext) {
    try {
      const params = CompatParams.read(ctx)
      const act = params.text('act') ?? ''
      switch (act) {
        case 'order':
          return answerEpay(ctx, await this.#order(ctx, params))
        case 'orders':
          return answerEpay(ctx, await this.#orders(ctx, params))
        case 'refund':
          // Nothing to look up or to protect: the same answer for everyone.
          return answerEpay(ctx, { code: -1, msg: REFUNDS_UNSUPPORTED_MESSAGE })
        default:
          return answerEpay(ctx, {
            code: -1,
            msg:
              act === ''
                ? `The act field is required (${ACTS})`
                : `Unknown act "${act.slice(0, 32)}": this gateway answers ${ACTS}`,
          })
      }
    } catch (error) {
      return refuseEpay(ctx, error)
    }
  }

  async #order(ctx: HttpContext, params: CompatParams): Promise<EpayAnswer> {
    const apiKey = await this.#authenticate(ctx, params)
    const by = await compatOrderQueryValidator.validate(withoutEmpty(params.texts()))
    const order = await compatOrderQuery.find(apiKey.pid, by)
    if (!order) throw new BusinessError(ErrorCode.ORDER_NOT_FOUND, 'Order does not exist')
    return { code: 1, msg: 'success', ...presentEpayOrder(order) }
  }

  async #orders(ctx: HttpContext, params: CompatParams): Promise<EpayAnswer> {
    const apiKey = await this.#authenticate(ctx, params)
    const { limit = 20, page = 1 } = await compatOrderListValidator.validate(
      withoutEmpty(params.texts())
    )
    const orders = await compatOrderQuery.page(apiKey.pid, page, limit)
    return { code: 1, msg: 'success', count: orders.length, data: orders.map(presentEpayOrder) }
  }

  /**
   * The key is compared in constant time (as digests, through the same
   * merchant check as signatures: an unknown pid costs the same and is
   * answered the same). Counted per pid on the query budget
   * (rate_limit.query_per_minute, shared with the native order query), so
   * that a shop polling its orders never stops its own order creation;
   * wrong keys count per client IP, like failed signatures.
   */
  async #authenticate(ctx: HttpContext, params: CompatParams): Promise<ApiKey> {
    return requestLimits.authenticateMerchant(ctx, 'query', async () => {
      const key = params.text('key')
      if (!key) {
        if (params.text('pid') && !params.text('sign')) {
          throw BusinessError.parameter(
            "The key field is required: the secret_key of the pid's API key (or sign the request)"
          )
        }
        return merchantAuth.authenticate(params.texts(), ctx.request.ip(), compatSigning(params))
      }
      // A secret has no spaces: a space is a "+" that an SDK put unencoded in the query.
      const given = { pid: params.text('pid'), key_digest: sha256Hex(key.replaceAll(' ', '+')) }
      try {
        return await merchantAuth.authenticate(given, ctx.request.ip(), {
          field: 'key_digest',
          expected: sha256Hex,
        })
      } catch (error) {
        if (error instanceof BusinessError && error.businessCode === ErrorCode.SIGNATURE) {
          throw BusinessError.signature(API_AUTH_FAILED_MESSAGE)
        }
        throw error
      }
    })
  }
}
