import orderExpiry from '#services/order_expiry'
import callbackDeliverer from '#callbacks/callback_deliverer'
import chainScanner from '#services/chain_scanner'
import jobRunner from '#jobs/job_runner'
import providerReconciliation from '#services/provider_reconciliation'

/**
 * The background jobs and how often the scheduler starts them
 * (start/scheduler.ts). Each also has an ace command for operators.
 */
export const scheduledJobs = {
  /** Waiting orders past their expiration → expired. */
  expireOrders: () => jobRunner.run('orders:expire', () => orderExpiry.expireDue()),
  /** Due merchant callbacks from the outbox. */
  deliverCallbacks: () => jobRunner.run('callbacks:deliver', () => callbackDeliverer.runOnce()),
  /** Chains whose scan interval has elapsed. */
  scanChains: () => jobRunner.run('chains:scan', () => chainScanner.runDue()),
  /** Pending provider payments whose notification never came (backing off per payment). */
  reconcileProviderPayments: () => jobRunner.run('provider:reconcile', () => providerReconciliation.runOnce()),
}
