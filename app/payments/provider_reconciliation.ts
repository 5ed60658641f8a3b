import logger from '@adonisjs/core/services/logger'
import db from '@adonisjs/lucid/services/db'
import providers, { NotificationRejectedError } from '#payments/payment_provider'
import providerCheckout from '#payments/provider_checkout'
import type { PaymentProvider } from '#payments/payment_provider'
import { OrderStatus } from '#models/order'

/** A payment is first asked about this long after it was created (the notification usually comes first). */
export const RECONCILE_FIRST_DELAY_MS = 60_000
/** Then after 1, 2, 4 … minutes, at most an hour apart. */
const BACKOFF_BASE_MS = 60_000
const BACKOFF_MAX_MS = 3_600_000
/** Payments asked about per run, oldest due first. */
export const RECONCILE_BATCH = 20
/**
 * An order that expired this recently is still asked about: a payer who
 * paid on the provider's page just before the end, whose notification was
 * lost, is credited late like a late chain payment (the payment path
 * accepts status 3 for the provider).
 */
export const RECONCILE_AFTER_EXPIRY_MS = 24 * 3_600_000

type Due = {
  id: number
  unique_id: string
  provider_order_id: string
  coin: string
  reconcile_attempts: number | string
  reconcile_next_at: number | string | null
}

/**
 * Asks each payment provider about its pending payments whose order still
 * waits (or expired less than a day ago) and whose notification never came, so that a lost notification
 * does not lose a payment. Bounded (RECONCILE_BATCH a run per provider) and backing off
 * per payment. A provider that cannot be asked (no retrieveStatus in its
 * contract) is left out.
 */
export class ProviderReconciliation {
  async runOnce(now = Date.now()): Promise<{ asked: number; paid: number }> {
    const total = { asked: 0, paid: 0 }
    for (const provider of providers.all()) {
      const retrieve = provider.retrieveStatus?.bind(provider)
      if (!retrieve) continue
      const { asked, paid } = await this.#reconcile(provider.name, retrieve, now)
      total.asked += asked
      total.paid += paid
    }
    return total
  }

  async #reconcile(
    name: string,
    retrieveStatus: NonNullable<PaymentProvider['retrieveStatus']>,
    now: number
  ): Promise<{ asked: number; paid: number }> {
    const due: Due[] = await db
      .from('provider_orders')
      .join('orders', 'orders.id', 'provider_orders.order_id')
      .where('provider_orders.provider', name)
      .where('provider_orders.status', 'pending')
      .whereNull('provider_orders.notified_at')
      .where((open) =>
        open
          .where('orders.status', OrderStatus.WAITING)
          .orWhere((late) =>
            late
              .where('orders.status', OrderStatus.EXPIRED)
              .where('orders.expiration_time', '>', now - RECONCILE_AFTER_EXPIRY_MS)
          )
      )
      .where('provider_orders.created_at', '<=', now - RECONCILE_FIRST_DELAY_MS)
      .where((query) =>
        query
          .whereNull('provider_orders.reconcile_next_at')
          .orWhere('provider_orders.reconcile_next_at', '<=', now)
      )
      .orderBy('provider_orders.id')
      .limit(RECONCILE_BATCH)
      .select(
        'provider_orders.id',
        'provider_orders.unique_id',
        'provider_orders.provider_order_id',
        'provider_orders.coin',
        'provider_orders.reconcile_attempts',
        'provider_orders.reconcile_next_at'
      )

    let asked = 0
    let paid = 0
    for (const row of due) {
      const attempts = Number(row.reconcile_attempts)
      const next = now + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempts, 20))
      // Claimed by moving its next time: another process running the job skips it.
      const claimed = await db
        .from('provider_orders')
        .where('id', row.id)
        .where((query) =>
          row.reconcile_next_at === null
            ? query.whereNull('reconcile_next_at')
            : query.where('reconcile_next_at', row.reconcile_next_at)
        )
        .update({ reconcile_attempts: attempts + 1, reconcile_next_at: next })
      if (Number(claimed) === 0) continue
      asked++
      try {
        const status = await retrieveStatus({
          tradeId: row.unique_id,
          providerOrderId: row.provider_order_id,
          coin: row.coin,
        })
        if (status.state !== 'paid') continue
        await providerCheckout.applyNotice(name, status.notice)
        paid++
        logger.info(
          { provider: name, unique_id: row.unique_id, status: status.raw },
          'provider payment reconciled: paid'
        )
      } catch (error) {
        const reason = error instanceof NotificationRejectedError ? 'refused' : 'failed'
        logger.warn(
          { provider: name, unique_id: row.unique_id, reason: (error as Error).message },
          `provider status ${reason}`
        )
      }
    }
    return { asked, paid }
  }
}

const providerReconciliation = new ProviderReconciliation()
export default providerReconciliation
