/*
|--------------------------------------------------------------------------
| Benchmark: the console's order list with 1,000,000 orders (PostgreSQL)
|--------------------------------------------------------------------------
|
|   npm run bench:console
|   BENCH_ORDERS=200000 BENCH_RUNS=100 npm run bench:console
|   BENCH_REUSE=1 npm run bench:console      # keep the seeded database of a previous run
|   BENCH_EXPLAIN=1 npm run bench:console    # also print the query plan of each case
|   BENCH_DB=sqlite npm run bench:console    # the same on SQLite (BENCH_SQLITE_PATH, default in the OS temp dir)
|
| Creates a fresh database (BENCH_PG_DB_NAME, default bench_console; PG_HOST,
| PG_PORT, PG_USER, PG_PASSWORD as for the app), migrates it, seeds the
| orders in SQL (INSERT … SELECT FROM generate_series: a year of orders,
| skewed like a real shop: mostly tron and paid, some rare networks, tokens,
| statuses, a rare pid, 2% compat, parent/child pairs, three orders per
| millisecond now and then), VACUUM ANALYZE (SQLite: left unanalysed, as an
| installation is), then times the console's order
| search service (app/services/admin/order_search.ts) itself, in process:
| each case BENCH_RUNS times (default 50) after 3 warm-up runs, and prints
| p50 / p95 / max per case. Goal: p95 under 100 ms for every case; exits 1
| otherwise. Last, a capped CSV export of the whole list (100,000 rows):
| its time and how much the process memory grew meanwhile.
*/
import 'reflect-metadata'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Ignitor } from '@adonisjs/core'

const ORDERS = Number(process.env.BENCH_ORDERS ?? 1_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 50)
const WARMUP = 3
const GOAL_MS = 100
const SQLITE = process.env.BENCH_DB === 'sqlite'
const DB_NAME = process.env.BENCH_PG_DB_NAME ?? 'bench_console'
const SQLITE_PATH = process.env.BENCH_SQLITE_PATH ?? join(tmpdir(), 'bench_console.sqlite3')
const REUSE = process.env.BENCH_REUSE === '1'
const EXPLAIN = process.env.BENCH_EXPLAIN === '1'
const DAY = 86_400_000

if (!/^[a-z_][a-z0-9_]*$/.test(DB_NAME))
  throw new Error(`BENCH_PG_DB_NAME must be a plain identifier, not ${DB_NAME}`)

if (SQLITE) {
  process.env.DB_CONNECTION = 'sqlite'
  process.env.SQLITE_PATH = SQLITE_PATH
} else {
  process.env.DB_CONNECTION = 'pg'
  process.env.PG_DB_NAME = DB_NAME
}
process.env.RUN_JOBS = 'false'
process.env.LOG_LEVEL ??= 'warn'
process.env.NODE_ENV ??= 'production'

function psql(sql: string) {
  const result = spawnSync(
    'psql',
    [
      '-h',
      process.env.PG_HOST ?? '127.0.0.1',
      '-p',
      process.env.PG_PORT ?? '5432',
      '-U',
      process.env.PG_USER ?? 'postgres',
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      sql,
    ],
    { encoding: 'utf8', env: { ...process.env, PGPASSWORD: process.env.PG_PASSWORD ?? '' } }
  )
  if (result.status !== 0) throw new Error(`psql ${sql}: ${result.stderr}`)
}

/** Rows of a raw query on either engine (pg: { rows }, SQLite: the array). */
function rowsOf(result: any): any[] {
  return Array.isArray(result) ? result : result.rows
}

/**
 * One chunk of orders g = from..to (ids = g, so a child can name its
 * parent g - 1), the same SQL on both engines: PostgreSQL's
 * generate_series, md5 and hashtext; on SQLite a recursive series and the
 * two functions registered by registerSqliteFunctions.
 */
function seedSql(from: number, to: number, now: number) {
  const step = Math.floor((365 * DAY) / ORDERS)
  const createdAt = `(${now - 365 * DAY} + (g / 3) * 3 * ${step})`
  const paid = 'rs BETWEEN 30 AND 649'
  const isChild = '(g % 200 = 1 AND g > 1)'
  const random = (salt: string) =>
    SQLITE ? `hashtext('${salt}' || g) % 1000` : `abs(hashtext('${salt}' || g)::bigint) % 1000`
  const series = SQLITE
    ? `WITH RECURSIVE series(g) AS (SELECT ${from} UNION ALL SELECT g + 1 FROM series WHERE g < ${to}) `
    : ''
  const source = SQLITE ? 'series' : `generate_series(${from}::bigint, ${to}::bigint) AS g`
  // rn, rt, rs, rp: independent repeatable pseudo-random 0..999 per row (hashes of g, no random()).
  return `${series}INSERT INTO orders (id, trade_id, order_id, parent_id, pid, payment_type, name, currency, amount, token, network,
      receive_address, actual_amount, status, notify_url, block_transaction_id, expiration_time, paid_at,
      callback_status, callback_attempts, created_at, updated_at)
    SELECT g, substr(md5('trade' || g), 1, 22),
      'ORD-' || CASE WHEN ${isChild} THEN g - 1 ELSE g END,
      CASE WHEN ${isChild} THEN g - 1 END,
      CASE WHEN g % 5000 = 0 THEN 'rare-shop' ELSE CAST(1001 + (g * 7) % 19 AS TEXT) END,
      CASE WHEN rp < 20 THEN 'Compat' ELSE 'Native' END,
      'Order ' || g, 'CNY', ((g % 10000) / 100.0 + 1) * 7.25,
      CASE WHEN rt < 850 THEN 'USDT' WHEN rt < 999 THEN 'USDC' ELSE 'TRX' END,
      CASE WHEN rn < 550 THEN 'tron' WHEN rn < 700 THEN 'ethereum' WHEN rn < 850 THEN 'bsc' WHEN rn < 930 THEN 'polygon'
        WHEN rn < 980 THEN 'solana' WHEN rn < 999 THEN 'ton' ELSE 'plasma' END,
      'T' || substr(md5('wallet' || (g % 500)), 1, 33), (g % 10000) / 100.0 + 1,
      CASE WHEN rs < 30 THEN 1 WHEN rs < 650 THEN 2 WHEN rs < 995 THEN 3 ELSE 4 END,
      'https://shop.example/notify',
      CASE WHEN ${paid} THEN '0x' || md5('tx' || g) || md5('hash' || g) ELSE '' END,
      ${createdAt} + 1800000,
      CASE WHEN ${paid} THEN ${createdAt} + 60000 END,
      CASE WHEN ${paid} THEN 'delivered' ELSE 'none' END,
      CASE WHEN ${paid} THEN 1 ELSE 0 END,
      ${createdAt}, ${createdAt}
    FROM (
      SELECT g, ${random('network')} AS rn, ${random('token')} AS rt, ${random('status')} AS rs,
        ${random('type')} AS rp
      FROM ${source}
    ) AS seed`
}

/** md5() and hashtext() for the seed SQL on SQLite (on its one pooled connection). */
async function registerSqliteFunctions(db: any) {
  const knex = db.connection().getWriteClient()
  const connection = await knex.client.acquireConnection()
  const md5 = (text: unknown) => createHash('md5').update(String(text)).digest('hex')
  connection.function('md5', { deterministic: true }, md5)
  connection.function('hashtext', { deterministic: true }, (text: unknown) =>
    Number.parseInt(md5(text).slice(0, 8), 16)
  )
  await knex.client.releaseConnection(connection)
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

const APP_ROOT = new URL('../', import.meta.url)
const IMPORTER = (filePath: string) => {
  if (filePath.startsWith('./') || filePath.startsWith('../'))
    return import(new URL(filePath, APP_ROOT).href)
  return import(filePath)
}

async function main() {
  if (!REUSE && SQLITE) {
    for (const suffix of ['', '-wal', '-shm', '.migrating'])
      rmSync(SQLITE_PATH + suffix, { force: true })
  } else if (!REUSE) {
    psql(`DROP DATABASE IF EXISTS ${DB_NAME}`)
    psql(`CREATE DATABASE ${DB_NAME}`)
  }
  const app = new Ignitor(APP_ROOT, { importer: IMPORTER }).createApp('console')
  app.booting(async () => {
    await import('#start/env')
  })
  await app.init()
  await app.boot()
  await app.start(() => {})

  try {
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const { default: installation } = await import('#services/installation_service')
    const { default: orderSearch, cursorOf } = await import('#services/admin/order_search')
    const { OrderExport } = await import('#services/admin/order_export')
    type Filters = Parameters<typeof orderSearch.page>[0]

    await installation.prepare({ print: () => {} })
    const [{ total }] = await db.from('orders').count('* as total')
    if (Number(total) !== ORDERS) {
      if (Number(total) !== 0)
        throw new Error(
          `The bench database holds ${total} orders; run without BENCH_REUSE for a fresh one`
        )
      const started = performance.now()
      const now = Date.now()
      const chunk = 100_000
      if (SQLITE) await registerSqliteFunctions(db)
      for (let from = 1; from <= ORDERS; from += chunk) {
        await db.rawQuery(seedSql(from, Math.min(ORDERS, from + chunk - 1), now))
        process.stdout.write(`\rseeding: ${Math.min(ORDERS, from + chunk - 1)} / ${ORDERS}`)
      }
      if (!SQLITE) {
        await db.rawQuery(`SELECT setval(pg_get_serial_sequence('orders', 'id'), ${ORDERS})`)
        await db.rawQuery('VACUUM ANALYZE orders')
      }
      console.log(
        `\nseeded ${ORDERS} orders in ${((performance.now() - started) / 1000).toFixed(1)} s` +
          (SQLITE ? ' (not analysed, as an installation is)' : ' (with VACUUM ANALYZE)')
      )
    }

    // Real values to look for, read once (not timed).
    const pick = async (where: string) =>
      rowsOf(
        await db.rawQuery(`SELECT * FROM orders WHERE ${where} ORDER BY id LIMIT 1 OFFSET 100`)
      )[0]
    const somePaid = await pick(`status = 2`)
    const child = await pick(`parent_id IS NOT NULL`)
    const busyAddress = rowsOf(
      await db.rawQuery(
        `SELECT receive_address, count(*) AS n FROM orders GROUP BY 1 ORDER BY 2 DESC LIMIT 1`
      )
    )[0]
    const deepRow = rowsOf(
      await db.rawQuery(
        `SELECT created_at, id FROM orders ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ${Math.floor(ORDERS * 0.9)}`
      )
    )[0]
    const deep = cursorOf({ createdAt: Number(deepRow.created_at), id: Number(deepRow.id) })
    const deepPaidRow = rowsOf(
      await db.rawQuery(
        `SELECT created_at, id FROM orders WHERE status = 2 ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ${Math.floor(ORDERS * 0.5)}`
      )
    )[0]
    const deepPaid = cursorOf({
      createdAt: Number(deepPaidRow.created_at),
      id: Number(deepPaidRow.id),
    })
    const dayStart = Date.now() - 100 * DAY
    const { next: secondPage } = await orderSearch.page({ status: 1 })

    const cases: [string, Filters, { after?: string | null }?][] = [
      ['first page, no filter', {}],
      ['status = waiting (3%)', { status: 1 }],
      ['status = waiting, page 2', { status: 1 }, { after: secondPage }],
      ['status = selecting (0.5%)', { status: 4 }],
      ['network = tron (55%)', { network: 'tron' }],
      ['network = plasma (0.1%)', { network: 'plasma' }],
      ['token = USDC (15%)', { token: 'USDC' }],
      ['token = TRX (0.1%)', { token: 'TRX' }],
      ['pid = 1005 (5%)', { pid: '1005' }],
      ['pid = rare-shop (0.02%)', { pid: 'rare-shop' }],
      ['payment type = Compat (2%)', { paymentType: 'Compat' }],
      ['created: one day, 100 days ago', { createdFrom: dayStart, createdUntil: dayStart + DAY }],
      [
        'paid + ethereum + USDC + 30 days',
        { status: 2, network: 'ethereum', token: 'USDC', createdFrom: Date.now() - 30 * DAY },
      ],
      ['pid = rare-shop + status = paid', { pid: 'rare-shop', status: 2 }],
      ['network = plasma + status = expired', { network: 'plasma', status: 3 }],
      ['search trade_id', { search: somePaid.trade_id }],
      ['search order_id (parent + child)', { search: child.order_id }],
      [`search address (${busyAddress.n} orders)`, { search: busyAddress.receive_address }],
      ['search address + status = expired', { search: busyAddress.receive_address, status: 3 }],
      ['search tx reference', { search: somePaid.block_transaction_id }],
      ['search, no match', { search: 'no-such-order-anywhere' }],
      ['deep page (90% down), no filter', {}, { after: deep }],
      ['deep page (50% down), status = paid', { status: 2 }, { after: deepPaid }],
    ]

    const engine = SQLITE
      ? `SQLite ${rowsOf(await db.rawQuery('SELECT sqlite_version() AS version'))[0].version}`
      : `PostgreSQL ${rowsOf(await db.rawQuery('SHOW server_version'))[0].server_version}`
    console.log(
      `\n${engine}, ${ORDERS} orders, ` +
        `${RUNS} runs per case (after ${WARMUP} warm-up), page size 50, node ${process.version}\n`
    )
    const header = ['case', 'rows', 'p50 ms', 'p95 ms', 'max ms', '']
    const lines: string[][] = []
    let failed = 0
    for (const [name, filters, request] of cases) {
      if (EXPLAIN) {
        console.log(`--- ${name}`)
        for (const { sql, bindings } of orderSearch.statements(filters, request ?? {})) {
          const plan = rowsOf(
            await db.rawQuery(
              `${SQLITE ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN (ANALYZE, BUFFERS)'} ${sql}`,
              bindings as any[]
            )
          )
          console.log(
            plan
              .map((row: Record<string, string>) => (SQLITE ? row.detail : row['QUERY PLAN']))
              .join('\n')
          )
        }
      }
      for (let run = 0; run < WARMUP; run++) await orderSearch.page(filters, request ?? {})
      const times: number[] = []
      let rows = 0
      for (let run = 0; run < RUNS; run++) {
        const started = performance.now()
        const page = await orderSearch.page(filters, request ?? {})
        times.push(performance.now() - started)
        rows = page.orders.length
      }
      times.sort((a, b) => a - b)
      const p95 = percentile(times, 95)
      if (p95 >= GOAL_MS) failed++
      lines.push([
        name,
        String(rows),
        percentile(times, 50).toFixed(2),
        p95.toFixed(2),
        times.at(-1)!.toFixed(2),
        p95 < GOAL_MS ? 'ok' : 'SLOW',
      ])
    }
    const widths = header.map((_, column) =>
      Math.max(header[column].length, ...lines.map((line) => line[column].length))
    )
    const format = (line: string[]) =>
      line
        .map((cell, column) =>
          column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])
        )
        .join('  ')
    console.log(format(header))
    console.log(widths.map((width) => '-'.repeat(width)).join('  '))
    for (const line of lines) console.log(format(line))
    console.log(
      failed === 0
        ? `\nall ${cases.length} cases: p95 < ${GOAL_MS} ms`
        : `\n${failed} case(s) at or above ${GOAL_MS} ms (p95)`
    )

    // The export streams: memory must not grow with the number of rows.
    // With --expose-gc (the npm script), the heap is measured after a
    // collection every 10,000 rows: what stays alive, not garbage waiting.
    const collect = (globalThis as { gc?: () => void }).gc
    const liveHeap = () => {
      collect?.()
      return process.memoryUsage().heapUsed
    }
    const heaps: number[] = [liveHeap()]
    let bytes = 0
    let rows = 0
    let capped = false
    const started = performance.now()
    for await (const line of new OrderExport().lines({})) {
      bytes += Buffer.byteLength(line)
      if (line.startsWith('# capped')) capped = true
      else rows++
      if (rows % 10_000 === 0) heaps.push(liveHeap())
    }
    const seconds = (performance.now() - started) / 1000
    const mb = (value: number) => (value / 1e6).toFixed(1)
    console.log(
      `\nCSV export, no filter: ${rows - 1} orders${capped ? ' (capped at 100,000, cap line written)' : ''}, ` +
        `${mb(bytes)} MB in ${seconds.toFixed(2)} s; ` +
        (collect
          ? `live heap every 10,000 rows: ${mb(Math.min(...heaps))}–${mb(Math.max(...heaps))} MB`
          : 'run with --expose-gc for the heap figures')
    )
    process.exitCode = failed === 0 ? 0 : 1
  } finally {
    await app.terminate()
  }
}

await main()
