import type Order from '#models/order'
import { OrderStatus } from '#models/order'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'

/**
 * When an order may still be acted on, in one place: the switch, the
 * submitted hash, the payment URI, the payment path, the payment sightings
 * and the cashier page all ask here, so that they cannot disagree about an
 * order whose life ends this very millisecond.
 */

/** Who is paying the order: each path may pay from different states. */
export type PaymentSource = 'scanner' | 'submit' | 'admin' | 'provider'

/** What the payer does on an open order. */
export type PayerAction = 'switch' | 'submit'

/**
 * Statuses each path may pay from: 1 (waiting) for all; 3 (expired) for a
 * late detection by the scanner, an admin repair and a provider
 * notification (the payer paid in time, we saw it late).
 */
const PAYABLE_FROM: Record<PaymentSource, number[]> = {
  scanner: [OrderStatus.WAITING, OrderStatus.EXPIRED],
  admin: [OrderStatus.WAITING, OrderStatus.EXPIRED],
  provider: [OrderStatus.WAITING, OrderStatus.EXPIRED],
  submit: [OrderStatus.WAITING],
}

/** Statuses in which the payer may act; the life is checked apart. */
const OPEN_FOR: Record<PayerAction, number[]> = {
  switch: [OrderStatus.WAITING, OrderStatus.SELECTING],
  submit: [OrderStatus.WAITING],
}

const notWaiting = (why: string) =>
  new BusinessError(ErrorCode.NOT_WAITING, `Order is not waiting for payment${why}`)

/**
 * The payer may still act: waiting (1) or choosing (4), and its life not
 * over. The life ends at `expirationTime` itself: at that millisecond the
 * order is no longer open.
 */
export function isOpen(order: Order, now = Date.now()): boolean {
  return OPEN_FOR.switch.includes(order.status) && order.expirationTime > now
}

/**
 * Refuses (10013) an action on an order that is not open for it: a
 * submitted hash needs an on-chain target and status 1; a switch takes
 * status 1 or 4. Expired orders are refused even before the expiry job
 * moved them to status 3.
 */
export function assertOpen(order: Order, action: PayerAction, now = Date.now()): void {
  if (action === 'submit') assertOnChainTarget(order)
  if (!OPEN_FOR[action].includes(order.status)) throw notWaiting(` (status ${order.status})`)
  if (order.expirationTime <= now) throw notWaiting(': it has expired')
}

/** Refuses (10013) an order without an on-chain target to pay (a placeholder still choosing). */
export function assertOnChainTarget(order: Order): void {
  if (!order.isOnChain) throw notWaiting(': choose a network and token first')
}

/** Whether `source` may move the order to paid from its current status (paid itself aside). */
export function isPayableBy(order: Order, source: PaymentSource): boolean {
  return PAYABLE_FROM[source].includes(order.status)
}

/** Refuses (10013) a payment by `source` from the order's current status. */
export function assertPayableBy(order: Order, source: PaymentSource): void {
  if (isPayableBy(order, source)) return
  throw notWaiting(
    order.status === OrderStatus.SELECTING
      ? ': no network and token chosen yet'
      : ` (status ${order.status})`
  )
}
