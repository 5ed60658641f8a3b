import orderExpiry from '#services/order_expiry'
import chainScanner from '#services/chain_scanner'
import jobRunner from '#jobs/job_runner'
import providerReconciliation from '#services/provider_reconciliation'

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
  /** Chains whose scan interval has elapsed. */
  scanChains: () => jobRunner.run('chains:scan', () => chainScanner.runDue()),
  /** Pending provider payments whose notification never came (backing off per payment). */
  reconcileProviderPayments: () => jobRunner.run('provider:reconcile', () => providerReconciliation.runOnce()),
}
