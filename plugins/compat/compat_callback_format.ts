import type ApiKey from '#models/api_key'
import type Order from '#models/order'
import type { CallbackFormat, CallbackRequest } from '#callbacks/callback_format'
import { toFixedDigits } from '#support/money'
import { compatSignature } from '#plugins/compat/compat_signature'

/**
 * Compat callback: GET notify_url with the EPay fields, MD5-signed with the
 * order's API key secret, money with four decimals, `type` as the order
 * gave it, else alipay.
 */
export class CompatCallbackFormat implements CallbackFormat {
  readonly name = 'compat'
  readonly paymentType = 'Compat'

  build(order: Order, apiKey: ApiKey): CallbackRequest {
    const params: Record<string, string> = {
      pid: apiKey.pid,
      trade_no: order.tradeId,
      out_trade_no: order.orderId,
      // EPay plugins expect a payment type; upstream sends alipay when the
      // order named none (it is signed like every other field).
      type: order.compatType || 'alipay',
      name: order.name,
      money: toFixedDigits(order.amount, 4),
      trade_status: 'TRADE_SUCCESS',
    }
    const query = new URLSearchParams({ ...params, sign: compatSignature(params, apiKey.signingSecret()), sign_type: 'MD5' })
    const separator = order.notifyUrl.includes('?') ? '&' : '?'
    return { method: 'GET', url: `${order.notifyUrl}${separator}${query.toString()}`, headers: {}, body: null }
  }
}
