import Order from '#models/order'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'

/** trade_ids are 22 alphanumerics; anything far from that cannot exist. */
const TRADE_ID = /^[A-Za-z0-9_-]{1,64}$/

/**
 * The order behind a trade_id given by a payer (cashier endpoints, switch,
 * submit-tx-hash, payment URI), or 10008.
 */
export async function orderByTradeId(tradeId: unknown): Promise<Order> {
  const text = String(tradeId ?? '')
  const order = TRADE_ID.test(text) ? await Order.findBy('trade_id', text) : null
  if (!order) throw new BusinessError(ErrorCode.ORDER_NOT_FOUND)
  return order
}
