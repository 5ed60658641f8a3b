import db from '@adonisjs/lucid/services/db'
import { registerScrapeGauge } from '#support/runtime/metrics'

/**
 * The gauges of /metrics that describe shared state, read from the
 * database when scraped (so every process tells the same truth). Imported
 * by the metrics controller: registering twice is harmless.
 */
export function registerDatabaseGauges() {
  registerScrapeGauge({
    name: 'gateway_callback_outbox_depth',
    help: 'Merchant callbacks in the outbox by status: pending (to deliver or retry) and failed (retries used up)',
    labelNames: ['status'] as const,
    async collect(gauge) {
      const rows: { status: string; count: number | string }[] = await db
        .from('callbacks')
        .whereIn('status', ['pending', 'failed'])
        .groupBy('status')
        .select('status')
        .count('* as count')
      // Both statuses always present: an empty outbox is 0, not a missing series.
      const counts = new Map(rows.map((row) => [row.status, Number(row.count)]))
      for (const status of ['pending', 'failed']) gauge.set({ status }, counts.get(status) ?? 0)
    },
  })

  registerScrapeGauge({
    name: 'gateway_scanner_lag_blocks',
    help: 'Blocks (slots, ...) between the chain head and the last scanned one, per enabled network, as of the last scan',
    labelNames: ['network'] as const,
    async collect(gauge) {
      for (const row of await scannerRows())
        if (row.lagBlocks !== null) gauge.set({ network: row.network }, row.lagBlocks)
    },
  })

  registerScrapeGauge({
    name: 'gateway_scanner_lag_seconds',
    help: "Scanner lag behind the head in seconds (lag in blocks × the chain's block time), per enabled network",
    labelNames: ['network'] as const,
    async collect(gauge) {
      for (const row of await scannerRows()) {
        if (row.lagBlocks !== null)
          gauge.set({ network: row.network }, (row.lagBlocks * row.blockTimeMs) / 1000)
      }
    },
  })

  registerScrapeGauge({
    name: 'gateway_scanner_heights_age_seconds',
    help: 'Seconds since the head and scanned heights of a network were last recorded (a stalled scanner grows it)',
    labelNames: ['network'] as const,
    async collect(gauge) {
      const now = Date.now()
      for (const row of await scannerRows()) {
        if (row.heightsAt !== null)
          gauge.set({ network: row.network }, Math.max(0, (now - row.heightsAt) / 1000))
      }
    },
  })
}

type ScannerRow = {
  network: string
  lagBlocks: number | null
  blockTimeMs: number
  heightsAt: number | null
}

/** One read per scrape for the three scanner gauges (their collects start together). */
let scannerRead: Promise<ScannerRow[]> | null = null

function scannerRows(): Promise<ScannerRow[]> {
  if (scannerRead) return scannerRead
  const rows = db
    .from('chains')
    .join('chain_cursors', 'chain_cursors.network', 'chains.network')
    .where('chains.enabled', true)
    .select(
      'chains.network',
      'chains.block_time_ms',
      'chain_cursors.head_height',
      'chain_cursors.scanned_height',
      'chain_cursors.heights_at'
    )
    .then((records: Record<string, any>[]) =>
      records.map((record) => {
        let lagBlocks: number | null = null
        if (record.head_height !== null && record.scanned_height !== null) {
          try {
            const difference = BigInt(record.head_height) - BigInt(record.scanned_height)
            lagBlocks = Number(difference > 0n ? difference : 0n)
          } catch {
            // not a height in blocks: no lag to report
          }
        }
        return {
          network: record.network as string,
          lagBlocks,
          blockTimeMs: Number(record.block_time_ms),
          heightsAt: record.heights_at === null ? null : Number(record.heights_at),
        }
      })
    )
  scannerRead = rows
  // Shared while under way only: the next scrape reads again.
  const forget = () => {
    if (scannerRead === rows) scannerRead = null
  }
  rows.then(forget, forget)
  return rows
}
