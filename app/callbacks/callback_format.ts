import type ApiKey from '#models/api_key'
import type Order from '#models/order'

/** The HTTP request that tells a merchant an order is paid. */
export type CallbackRequest = {
  method: 'GET' | 'POST'
  url: string
  headers: Record<string, string>
  body: string | null
}

/**
 * A way of telling merchants: native (POST JSON, HMAC-SHA256) in app/,
 * compat (GET, MD5) in plugins/compat. The order's payment_type picks it.
 */
export interface CallbackFormat {
  readonly name: string
  build(order: Order, apiKey: ApiKey): CallbackRequest
  /**
   * Where the payer goes back to the shop once `order` is paid
   * (GET /pay/return/{trade_id}): native returns to redirect_url as given,
   * compat adds the EPay return parameters, signed like its callback.
   */
  returnUrl(order: Order, apiKey: ApiKey): string
}

export class CallbackFormatRegistry {
  #formats = new Map<string, CallbackFormat>()

  register(format: CallbackFormat) {
    this.#formats.set(format.name, format)
  }

  get(name: string): CallbackFormat {
    const format = this.#formats.get(name)
    if (!format) throw new Error(`No callback format "${name}" is registered`)
    return format
  }

  /** Compat orders (and native orders created with payment_type Compat) get the compat format. */
  nameFor(order: Order): string {
    return order.paymentType === 'Compat' ? 'compat' : 'native'
  }
}

const callbackFormats = new CallbackFormatRegistry()
export default callbackFormats
