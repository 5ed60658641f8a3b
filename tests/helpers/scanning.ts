import db from '@adonisjs/lucid/services/db'
import chainScanner from '#services/chain_scanner'

/** One scan run of `network`, as `chains:scan` does it; a run that did not scan (or failed) throws its detail. */
export async function scanOnce(network: string) {
  const [report] = await chainScanner.scan({ network })
  if (!report.scanned) throw new Error(`scan of ${network} did not run: ${report.detail}`)
  return report
}

/** The cursor the scanner saved for `network` (null before the first scan). */
export async function persistedCursor(network: string) {
  const row = await db.from('chain_cursors').where('network', network).first()
  return row?.cursor ? JSON.parse(row.cursor) : null
}
