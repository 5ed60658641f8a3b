import type { ApiClient } from '@japa/api-client'
import type { Group } from '@japa/runner/core'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import { resetDatabase } from '#tests/helpers/database'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'

/**
 * The merchant's callback endpoint for a test group: started before the
 * group's first test, stopped after its last. Before each test the database
 * is reset, the payment lifecycle prepared (the fake chain, a rate, callbacks
 * to 127.0.0.1 allowed; `lifecycle: false` leaves it out) and the merchant's
 * record emptied, its answers set to `replies` (`success` unless told).
 *
 * A group's own preparation goes in its own `group.each.setup`, which runs
 * after this one.
 */
export function merchantForGroup(
  group: Group,
  options: { replies?: MerchantServer['replies']; lifecycle?: boolean } = {}
): MerchantServer {
  const merchant = new MerchantServer()
  group.setup(async () => {
    await merchant.start()
    return () => merchant.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    if (options.lifecycle !== false) await prepareLifecycle()
    merchant.reset(options.replies)
  })
  return merchant
}

/** A merchant that answers the first callback with a 503 (down for maintenance), then `success`. */
export const DOWN_ONCE: MerchantServer['replies'] = [
  { status: 503, body: 'maintenance, try later' },
  { status: 200, body: 'success' },
]

/** An order whose notify_url is the merchant's, marked paid by the scanner (reference tx-<trade id>). */
export async function paidOrder(
  client: ApiClient,
  merchant: MerchantServer,
  overrides: Record<string, unknown> = {}
): Promise<Order> {
  const order = await newOrder(client, { notify_url: merchant.notifyUrl, ...overrides })
  await paymentService.markPaid(order.id, { reference: `tx-${order.tradeId}`, source: 'scanner' })
  return Order.findOrFail(order.id)
}
