import Order, { OrderStatus } from '#models/order'
import type Token from '#models/token'
import { Decimal, stepOf } from '#support/text/money'

/**
 * How long after its end an order is still watched for a transfer: the
 * scanner's late window (a payment made in time but seen late, a second
 * payment of a paid order, must reach the matcher and the operator).
 */
export const LATE_WINDOW_MS = 24 * 3600_000

/**
 * Decides, before a family spends any further RPC call on a transfer,
 * whether it is dust or address poisoning: a transfer that cannot be a
 * payment the operator needs to see.
 *
 * The bar of a token is `percent` % of the smallest amount a watched order
 * of that token on the network waits for, and never below one amount step
 * of the token (10^-precision: no order can ask less). Watched orders are
 * the waiting ones and those that ended or were paid within the late
 * window (counted back from the previous scan, so that a scanner that was
 * down still watches what it missed). A transfer below the bar is dust.
 *
 * Why a percentage and not the smallest amount itself: a payer whose
 * exchange deducted a fee sends a little less than asked; the operator
 * must see that payment (unmatched, to settle by hand), and it is below
 * the order's amount. 100 % is the strict reading; 0 % keeps everything
 * but zero amounts and amounts below one step.
 *
 * With no watched order of the token the bar is one step: payments that
 * come without an order (a payer reusing an old address after the late
 * window) are still recorded as unmatched, as they always were; only
 * transfers no order could ever ask for are dropped.
 *
 * A token the chain does not watch is never called dust here (the family
 * ignores it anyway).
 */
export async function dustCheck(
  network: string,
  tokens: Token[],
  options: { percent: number; previousScanAt: number; now?: number }
): Promise<(contract: string | null, amount: string) => boolean> {
  const now = options.now ?? Date.now()
  const since =
    Math.min(now, options.previousScanAt > 0 ? options.previousScanAt : now) - LATE_WINDOW_MS
  const rows = await Order.query()
    .where('network', network)
    .where('pay_provider', '')
    .whereIn(
      'token',
      tokens.map((token) => token.symbol)
    )
    .where((watched) =>
      watched
        .where('status', OrderStatus.WAITING)
        .orWhere((ended) =>
          ended.where('status', OrderStatus.EXPIRED).where('expiration_time', '>', since)
        )
        .orWhere((paid) => paid.where('status', OrderStatus.PAID).where('paid_at', '>', since))
    )
    .groupBy('token')
    .select('token')
    .min('actual_amount as smallest')
  const smallest = new Map(
    rows.map((row) => [row.token, new Decimal(String(row.$extras.smallest))])
  )
  const bars = new Map<string | null, Decimal>()
  for (const token of tokens) {
    const step = stepOf(token.amountPrecision)
    const least = smallest.get(token.symbol)
    const share = least ? least.times(options.percent).div(100) : step
    bars.set(token.contract, Decimal.max(step, share))
  }
  return (contract, amount) => {
    const bar = bars.get(contract)
    if (!bar) return false
    const value = new Decimal(amount)
    if (!value.isFinite()) return false
    return value.lt(bar)
  }
}
