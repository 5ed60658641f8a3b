import db from '@adonisjs/lucid/services/db'
import { plural, result, type CheckResult } from '#services/doctor/doctor_check'

const TITLE = 'Merchant callbacks'
const DAY_MS = 86_400_000

/**
 * Callbacks of the last 24 h that the merchants did not take: given up
 * (status failed, after every retry) and still retrying (pending, tried
 * at least once), from the outbox's rows.
 */
export async function callbackChecks(now: number): Promise<CheckResult[]> {
  const since = now - DAY_MS
  const [rows, hosts] = await Promise.all([
    db
      .from('callbacks')
      .where('updated_at', '>=', since)
      .where((query) =>
        query
          .where('status', 'failed')
          .orWhere((pending) => pending.where('status', 'pending').where('attempts', '>', 0))
      )
      .groupBy('status')
      .select('status')
      .count('* as total'),
    db
      .from('callbacks')
      .where('updated_at', '>=', since)
      .where('status', 'failed')
      .whereNotNull('last_http_status')
      .groupBy('last_http_status')
      .select('last_http_status')
      .count('* as total')
      .orderBy('total', 'desc')
      .limit(1),
  ])
  const failed = Number(rows.find((row) => row.status === 'failed')?.total ?? 0)
  const retrying = Number(rows.find((row) => row.status === 'pending')?.total ?? 0)
  const results: CheckResult[] = []
  if (failed > 0) {
    const common = hosts[0] ? ` (most answered HTTP ${hosts[0].last_http_status})` : ''
    results.push(
      result(
        'callbacks',
        TITLE,
        'problem',
        `${plural(failed, 'callback')} given up in the last 24 h${common}: those merchants were not told of paid orders`,
        'Fix the merchant’s notify URL or server, then node ace callbacks:redeliver (or "Send again" on the console’s Callbacks page)',
        'given_up'
      )
    )
  }
  if (retrying > 0) {
    results.push(
      result(
        'callbacks',
        TITLE,
        'warning',
        `${plural(retrying, 'callback')} retrying after a failed delivery in the last 24 h`,
        'See the last error on the console’s Callbacks page; the merchant’s server must answer HTTP 200 with "ok" or "success"',
        'retrying'
      )
    )
  }
  if (results.length === 0)
    results.push(
      result('callbacks', TITLE, 'ok', 'No callback failed or is retrying in the last 24 h')
    )
  return results
}
