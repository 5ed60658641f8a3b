import type ApiKey from '#models/api_key'
import type Order from '#models/order'
import type { CallbackFormat, CallbackRequest } from '#callbacks/callback_format'
import { toJsonNumber } from '#support/text/money'
import { nativeSignature, signedNumber, type SignableParams } from '#support/crypto/signing'

/**
 * Native callback: POST JSON with exactly the spec's fields, signed like a
 * native request: numbers signed as they print (signedNumber), which the
 * request check uses too.
 */
export class NativeCallbackFormat implements CallbackFormat {
  readonly name = 'native'
  readonly paymentType = 'Native'

  build(order: Order, apiKey: ApiKey): CallbackRequest {
    const fields = {
      pid: apiKey.pid,
      trade_id: order.tradeId,
      order_id: order.orderId,
      amount: toJsonNumber(order.amount),
      actual_amount: toJsonNumber(order.actualAmount),
      receive_address: order.receiveAddress,
      token: order.token,
      block_transaction_id: order.blockTransactionId,
      status: order.status,
    }
    const signable: SignableParams = {}
    for (const [name, value] of Object.entries(fields)) {
      signable[name] = typeof value === 'number' ? signedNumber(value) : String(value)
    }
    const body = { ...fields, signature: nativeSignature(signable, apiKey.signingSecret()) }
    return {
      method: 'POST',
      url: order.notifyUrl,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }
  }

  returnUrl(order: Order): string {
    return order.redirectUrl
  }
}
