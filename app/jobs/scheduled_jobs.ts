import orderExpiry from '#services/order_expiry'
import chainWatch from '#chains/chain_watch'
import jobRunner from '#jobs/job_runner'
import providerReconciliation from '#payments/provider_reconciliation'
import { watchForNotifications } from '#notifications/notification_watch'
import rateRefresh from '#rates/rate_refresh'

/**
 * The background jobs and how often the scheduler starts them
 * (start/scheduler.ts). Each also has an ace command for operators.
 * Merchant callbacks are not among them: the delivery loop
 * (#callbacks/delivery_loop, started with the jobs) sends them as they
 * become due.
 */
export const scheduledJobs = {
  /** Waiting orders past their expiration → expired. */
  expireOrders: () => jobRunner.run('orders:expire', () => orderExpiry.expireDue()),
  /**
   * The chain watches follow the configuration (a chain enabled, disabled,
   * given a WebSocket endpoint ...); they scan on each new head or at the
   * poll interval by themselves (app/chains/chain_watch.ts).
   */
  scanChains: () => jobRunner.run('chains:watch', () => chainWatch.sync()),
  /** Pending provider payments whose notification never came (backing off per payment). */
  reconcileProviderPayments: () =>
    jobRunner.run('provider:reconcile', () => providerReconciliation.runOnce()),
  /** Live exchange rates from the enabled sources, every rate.refresh_seconds. */
  refreshRates: () => jobRunner.run('rates:refresh', () => rateRefresh.runIfDue()),
  /** Events nobody's action raises: a stalled scanner, stale rates, the daily report. */
  watchNotifications: () => jobRunner.run('notifications:watch', () => watchForNotifications()),
}
