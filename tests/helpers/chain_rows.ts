import db from '@adonisjs/lucid/services/db'
import chainAdmin from '#services/operators/chain_admin'
import walletAdmin from '#services/operators/wallet_admin'
import { TRON_WALLET } from '#tests/helpers/merchant'
import doctor from '#services/doctor/doctor'
import { resetDatabase } from '#tests/helpers/database'
import { DAY, resetOrderRows, seedOrderRow } from '#tests/helpers/order_rows'

/**
 * Rows of chains, receiving wallets and scanner cursors written straight
 * into the tables, as the console's dashboard and chains pages read them.
 */

/**
 * `network` enabled (with `chain`'s columns) with an enabled receiving
 * wallet (`<network>-wallet` unless told): watched by a scanner.
 */
export async function watchChain(
  network: string,
  now: number,
  options: { address?: string; chain?: Record<string, unknown> } = {}
) {
  await db.table('wallets').insert({
    network,
    address: options.address ?? `${network}-wallet`,
    enabled: true,
    note: '',
    created_at: now,
    updated_at: now,
  })
  await db
    .from('chains')
    .where('network', network)
    .update({ enabled: true, ...options.chain })
}

/** The scanner's cursor row of `network` as a scan leaves it: an empty cursor, caught up, no error unless `row` says. */
export async function insertCursor(
  network: string,
  now: number,
  row: {
    cursor?: string
    caught_up?: boolean
    last_scan_at: number
    last_error?: string
    head_height?: string
    scanned_height?: string
    heights_at?: number
  }
) {
  await db
    .table('chain_cursors')
    .insert({ network, cursor: '{}', caught_up: true, last_error: '', ...row, updated_at: now })
}

/** BSC watched, its scanner 100 blocks (≈ 5 min at 3 s a block) behind the head, waiting for 15 confirmations. */
export async function bscFarBehind(now: number) {
  await watchChain('bsc', now, { chain: { confirmations: 15, block_time_ms: 3000 } })
  await insertCursor('bsc', now, {
    last_scan_at: now - 5000,
    head_height: '50000100',
    scanned_height: '50000000',
    heights_at: now - 5000,
  })
}

/** What the dashboard remembers between tests, forgotten: order rows numbered from 1 again, the doctor's checks not run. */
export function forgetDashboard() {
  resetOrderRows()
  doctor.reset()
}

/** A fresh database and a dashboard that remembers nothing ({@link forgetDashboard}). */
export async function freshDashboard() {
  await resetDatabase()
  forgetDashboard()
}

/**
 * Two weeks of the dashboard's figures up to `now`: `perDay(day)` orders a
 * day (every third expired, the others paid), one order waiting on ethereum,
 * and TRON watched, its scanner 19 blocks behind after an HTTP 429.
 */
export async function fillDashboard(now: number, perDay: (day: number) => number) {
  for (let day = 0; day < 14; day++)
    for (let index = 0; index < perDay(day); index++)
      await seedOrderRow({
        status: index % 3 === 0 ? 3 : 2,
        createdAt: now - day * DAY - index * 1000,
        actualAmount: `${10 + index}.25`,
      })
  await seedOrderRow({ status: 1, createdAt: now - 500, network: 'ethereum' })
  await watchChain('tron', now, { address: 'TWallet' })
  await insertCursor('tron', now, {
    last_scan_at: now - 4000,
    last_error: 'interrupted: HTTP 429 Too Many Requests from https://api.trongrid.io',
    head_height: '70000020',
    scanned_height: '70000001',
    heights_at: now - 4000,
  })
}

/**
 * The chains pages' state for the browser checks: ethereum with an RPC URL
 * that carries a key, TRON with an API key, a wallet and a scan interrupted
 * by an HTTP 429 (not caught up).
 */
export async function prepareChainsPages() {
  await chainAdmin.set('ethereum', {
    rpcUrls: ['https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef'],
  })
  await chainAdmin.set('tron', { apiKey: 'tron-pro-key-abcdefghijklmnop-1234' })
  await walletAdmin.add('tron', TRON_WALLET)
  const now = Date.now()
  await insertCursor('tron', now, {
    cursor: '{"since":1763700000000,"lagging":{}}',
    caught_up: false,
    last_scan_at: now,
    last_error: 'interrupted: HTTP 429 from https://api.trongrid.io/v1/accounts',
  })
}
