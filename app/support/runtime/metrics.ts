import logger from '@adonisjs/core/services/logger'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/**
 * The gateway's Prometheus series (served by GET /metrics). One registry
 * per process: counters count what this process did (scrape every
 * process); gauges that describe shared state (outbox depth, scanner lag)
 * are read from the database when scraped, so any process tells the truth.
 *
 * Every series is named here, so the list of what an operator can chart is
 * in one place (README "Metrics").
 */
export const registry = new Registry()
// Node's own series: gateway_process_cpu_seconds_total, gateway_nodejs_heap_size_used_bytes ...
collectDefaultMetrics({ register: registry, prefix: 'gateway_' })

export const metrics = {
  httpRequestDuration: new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'HTTP requests by route pattern (not the URL: bounded labels), method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  }),
  httpRequestsInFlight: new Gauge({
    name: 'gateway_http_requests_in_flight',
    help: 'HTTP requests being answered by this process now (npm start only)',
    registers: [registry],
  }),
  ordersCreated: new Counter({
    name: 'gateway_orders_created_total',
    help: 'Orders created, by network and token (a placeholder order without either has them empty)',
    labelNames: ['network', 'token'] as const,
    registers: [registry],
  }),
  ordersPaid: new Counter({
    name: 'gateway_orders_paid_total',
    help: 'Orders marked paid, by network and token',
    labelNames: ['network', 'token'] as const,
    registers: [registry],
  }),
  ordersExpired: new Counter({
    name: 'gateway_orders_expired_total',
    help: 'Orders expired or closed, by network and token',
    labelNames: ['network', 'token'] as const,
    registers: [registry],
  }),
  callbackAttempts: new Counter({
    name: 'gateway_callback_attempts_total',
    help: 'Merchant callback attempts by outcome (delivered, retrying, failed, held)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  amountAllocationRetries: new Counter({
    name: 'gateway_amount_allocation_retries_total',
    help: 'Amount-allocation candidates that were already taken (another order won the pair)',
    labelNames: ['network', 'token'] as const,
    registers: [registry],
  }),
  rpcRequests: new Counter({
    name: 'gateway_rpc_requests_total',
    help: 'Chain RPC requests by network and endpoint (host only: no keys)',
    labelNames: ['network', 'endpoint'] as const,
    registers: [registry],
  }),
  unexplainedIncoming: new Counter({
    name: 'gateway_unexplained_incoming_total',
    help: 'Balance rises larger than the transfers the scanner saw (value it could not read), recorded in the unmatched inbox, by network and token',
    labelNames: ['network', 'token'] as const,
    registers: [registry],
  }),
  reorgedPayments: new Counter({
    name: 'gateway_reorged_payments_total',
    help: 'Paid orders whose payment came from a block a reorganisation replaced (flagged for the operator), by network',
    labelNames: ['network'] as const,
    registers: [registry],
  }),
  rpcErrors: new Counter({
    name: 'gateway_rpc_errors_total',
    help: 'Chain RPC calls that failed, by network, endpoint and kind (rate_limited, credits_spent, http, network: also timeouts and bad answers, budget_spent)',
    labelNames: ['network', 'endpoint', 'kind'] as const,
    registers: [registry],
  }),
}

/**
 * Whether each scrape gauge could be read at the last scrape (1) or not (0:
 * its database read failed or took too long; the gauge then has no samples
 * rather than stale ones, and the rest of /metrics is still served).
 */
export const scrapeOk = new Gauge({
  name: 'gateway_metrics_scrape_ok',
  help: 'Whether a gauge read from the database at scrape time could be read (1) or not (0)',
  labelNames: ['series'] as const,
  registers: [registry],
  // Every collect of a scrape starts in one tick (registry.metrics()); this
  // one reports once the scrape gauges' reads of the same scrape are done.
  async collect() {
    await new Promise((resolve) => setImmediate(resolve))
    await Promise.allSettled([...collecting])
  },
})

/** Scrape gauges' reads under way. */
const collecting = new Set<Promise<void>>()

/** A scrape gauge's read that takes longer than this is given up. */
const SCRAPE_TIMEOUT_MS = 2000

/**
 * Gauges whose value is read when scraped (from the database). Created by
 * registerScrapeGauge so that the collect function is the module that
 * knows the data's own. A failing or slow collect never fails the scrape:
 * the gauge is emptied and `gateway_metrics_scrape_ok{series}` says 0.
 */
export function registerScrapeGauge<L extends string>(options: {
  name: string
  help: string
  labelNames: readonly L[]
  collect: (gauge: Gauge<L>) => Promise<void>
}): Gauge<L> {
  const existing = registry.getSingleMetric(options.name)
  if (existing) return existing as Gauge<L>
  return new Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames,
    registers: [registry],
    async collect() {
      const work = collectSafely(this, options.name, options.collect)
      collecting.add(work)
      try {
        await work
      } finally {
        collecting.delete(work)
      }
    },
  })
}

async function collectSafely<L extends string>(
  gauge: Gauge<L>,
  name: string,
  collect: (gauge: Gauge<L>) => Promise<void>
): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  try {
    gauge.reset()
    await Promise.race([
      collect(gauge),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${SCRAPE_TIMEOUT_MS} ms`)),
          SCRAPE_TIMEOUT_MS
        )
      }),
    ])
    scrapeOk.set({ series: name }, 1)
  } catch (error) {
    gauge.reset()
    scrapeOk.set({ series: name }, 0)
    logger.warn(
      { series: name, err: (error as Error)?.message },
      'metrics: a scrape gauge could not be read'
    )
  } finally {
    clearTimeout(timer)
  }
}
