import type ApiKey from '#models/api_key'
import type Order from '#models/order'
import type { CallbackFormat, CallbackRequest } from '#callbacks/callback_format'
import { toFixedDigits } from '#support/text/money'
import { compatSignature } from '#plugins/compat/compat_signature'

/**
 * Compat callback: GET notify_url with the EPay fields, MD5-signed with the
 * order's API key secret, money with four decimals, `type` as the order
 * gave it, else alipay. The payer's return to return_url carries the same
 * signed fields, as EPay shop plugins verify the return like the notification.
 */
export class CompatCallbackFormat implements CallbackFormat {
  readonly name = 'compat'
  readonly paymentType = 'Compat'

  /** EPay's merchant ids are numbers: its plugins sign and check a numeric pid. */
  refusesKey(apiKey: Pick<ApiKey, 'pid'>): string | null {
    return /^\d+$/.test(apiKey.pid) ? null : 'payment_type Compat requires a numeric pid'
  }

  build(order: Order, apiKey: ApiKey): CallbackRequest {
    return {
      method: 'GET',
      url: withQuery(order.notifyUrl, this.signedParams(order, apiKey)),
      headers: {},
      body: null,
    }
  }

  returnUrl(order: Order, apiKey: ApiKey): string {
    return withQuery(order.redirectUrl, this.signedParams(order, apiKey))
  }

  /** The EPay success fields with `sign` and `sign_type`. */
  signedParams(order: Order, apiKey: ApiKey): URLSearchParams {
    const params: Record<string, string> = {
      pid: apiKey.pid,
      trade_no: order.tradeId,
      out_trade_no: order.orderId,
      type: epayType(order),
      name: order.name,
      money: epayMoney(order.amount),
      trade_status: 'TRADE_SUCCESS',
    }
    return new URLSearchParams({
      ...params,
      sign: compatSignature(params, apiKey.signingSecret()),
      sign_type: 'MD5',
    })
  }
}

/**
 * The `type` of an order in EPay answers (callback, return, order query):
 * EPay plugins expect a payment type; upstream sends alipay when the order
 * named none (it is signed like every other field).
 */
export function epayType(order: Pick<Order, 'flavourType'>): string {
  return order.flavourType || 'alipay'
}

/** The fiat amount in EPay answers: four decimals (the spec's compat callback). */
export function epayMoney(amount: string): string {
  return toFixedDigits(amount, 4)
}

function withQuery(url: string, query: URLSearchParams): string {
  const separator = url.includes('?') ? '&' : '?'
  return `${url}${separator}${query.toString()}`
}
