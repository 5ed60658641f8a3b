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
 * others from plugins. The order's payment_type picks it.
 */
export interface CallbackFormat {
  readonly name: string
  /** The orders' payment_type this format serves (`Native`, or a plugin format's own). */
  readonly paymentType: string
  build(order: Order, apiKey: ApiKey): CallbackRequest
  /**
   * Where the payer goes back to the shop once `order` is paid
   * (GET /pay/return/{trade_id}): native returns to redirect_url as given,
   * a plugin format may add its own return parameters, signed like its
   * callback.
   */
  returnUrl(order: Order, apiKey: ApiKey): string
  /**
   * Why a merchant key cannot have orders of this payment_type (e.g. a
   * format whose shops sign a numeric pid), or null. Asked on create and by
   * the console's test callback.
   */
  refusesKey?(apiKey: Pick<ApiKey, 'pid'>): string | null
}

export class CallbackFormatRegistry {
  #formats = new Map<string, CallbackFormat>()

  register(format: CallbackFormat) {
    this.#formats.set(format.name, format)
  }

  has(name: string): boolean {
    return this.#formats.has(name)
  }

  /** Names of the loaded formats (a pending callback of another format is held). */
  names(): string[] {
    return [...this.#formats.keys()]
  }

  /** Whether a loaded format serves orders of this payment_type. */
  servesPaymentType(paymentType: string): boolean {
    return [...this.#formats.values()].some((format) => format.paymentType === paymentType)
  }

  /** The loaded format serving a payment_type, in any case (`native` → the `Native` one). */
  forPaymentType(paymentType: string): CallbackFormat | undefined {
    const wanted = paymentType.toLowerCase()
    return [...this.#formats.values()].find((format) => format.paymentType.toLowerCase() === wanted)
  }

  get(name: string): CallbackFormat {
    const format = this.#formats.get(name)
    if (!format) throw new Error(`No callback format "${name}" is registered`)
    return format
  }

  /**
   * The format serving the order's payment_type. When its plugin is off,
   * the lower-cased payment_type is kept: the callback is then held in the
   * outbox (never sent in another format, no attempt spent) until the
   * plugin is back.
   */
  nameFor(order: Order): string {
    for (const format of this.#formats.values()) {
      if (format.paymentType === order.paymentType) return format.name
    }
    return order.paymentType.toLowerCase()
  }
}

const callbackFormats = new CallbackFormatRegistry()
export default callbackFormats
