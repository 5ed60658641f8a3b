import env from '#start/env'
import type Order from '#models/order'
import type { CreatedOrder } from '#services/order_service'
import { toJsonNumber } from '#support/money'

/**
 * The shapes in which orders leave the service, field for field as the
 * spec lists them.
 */
export function cashierUrl(tradeId: string): string {
  const base = String(env.get('APP_URL')).replace(/\/+$/, '')
  return `${base}/pay/checkout-counter/${tradeId}`
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
    payment_url: order.payProvider !== '' ? order.paymentUrl : '',
    created_at: order.createdAt,
    server_time: now,
    is_selected: order.isSelected,
  }
}

export function presentStatus(order: Order) {
  return { trade_id: order.tradeId, status: order.status }
}
