import env from '#start/env'
import type Order from '#models/order'
import type { CreatedOrder } from '#services/order_service'
import { toJsonNumber } from '#support/text/money'
import { isWebAddress } from '#support/http/web_address'

/**
 * The shapes in which orders leave the service, field for field as the
 * spec lists them.
 */
export function cashierUrl(tradeId: string): string {
  const base = String(env.get('APP_URL')).replace(/\/+$/, '')
  return `${base}/pay/checkout-counter/${tradeId}`
}

/** The gateway's return page of an order (GET /pay/return/{trade_id}): where a payer goes back to the shop. */
export function returnPageUrl(tradeId: string): string {
  const base = String(env.get('APP_URL')).replace(/\/+$/, '')
  return `${base}/pay/return/${tradeId}`
}

/** `data` of the native create response (expiration_time in seconds). */
export function presentCreated(order: CreatedOrder) {
  return {
    trade_id: order.tradeId,
    order_id: order.orderId,
    amount: toJsonNumber(order.amount),
    currency: order.currency,
    actual_amount: toJsonNumber(order.actualAmount),
    receive_address: order.receiveAddress,
    token: order.token,
    status: order.status,
    expiration_time: Math.floor(order.expirationTime / 1000),
    payment_url: cashierUrl(order.tradeId),
  }
}

/**
 * `data` of the cashier init (and switch) response; times in milliseconds.
 * payment_url is the hosted link for provider orders, empty for on-chain.
 */
export function presentCashier(order: Order, now = Date.now()) {
  return {
    trade_id: order.tradeId,
    amount: toJsonNumber(order.amount),
    actual_amount: toJsonNumber(order.actualAmount),
    token: order.token,
    currency: order.currency,
    receive_address: order.receiveAddress,
    network: order.network,
    status: order.status,
    payment_type: order.paymentType.toLowerCase(),
    expiration_time: order.expirationTime,
    redirect_url: order.redirectUrl,
    payment_url: order.payProvider !== '' && isWebAddress(order.paymentUrl) ? order.paymentUrl : '',
    created_at: order.createdAt,
    server_time: now,
    is_selected: order.isSelected,
  }
}

/** Epoch ms to whole seconds (the merchant API's unit, as in the create response). */
const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000))

/**
 * One order as the native order query shows it to its merchant: the
 * create response's fields and what happened since (network, address,
 * `block_transaction_id`, times). Times are seconds since the epoch, as in
 * the create response; `paid_at` null until paid.
 */
function presentQueriedOrder(order: Order) {
  return {
    trade_id: order.tradeId,
    order_id: order.orderId,
    amount: toJsonNumber(order.amount),
    currency: order.currency,
    actual_amount: toJsonNumber(order.actualAmount),
    token: order.token,
    network: order.network,
    receive_address: order.receiveAddress,
    status: order.status,
    payment_type: order.paymentType.toLowerCase(),
    pay_provider: order.payProvider,
    block_transaction_id: order.blockTransactionId,
    created_at: seconds(order.createdAt),
    expiration_time: seconds(order.expirationTime),
    paid_at: seconds(order.paidAt),
  }
}

/**
 * `data` of POST /payments/native/v1/order/query: the (parent) order, and
 * the payment target the payer switched to since (`child`, null when
 * none): a parent paid through its child carries the child's payment
 * details itself.
 */
export function presentQueried(order: Order, child: Order | null) {
  return {
    ...presentQueriedOrder(order),
    is_selected: order.isSelected,
    redirect_url: order.redirectUrl,
    payment_url: cashierUrl(order.tradeId),
    child: child ? presentQueriedOrder(child) : null,
  }
}

export function presentStatus(order: Order) {
  return { trade_id: order.tradeId, status: order.status }
}
