/*
|--------------------------------------------------------------------------
| Benchmark: merchant callback delivery (the outbox worker)
|--------------------------------------------------------------------------
|
|   npm run bench:callbacks                          # SQLite (file in the OS temp dir)
|   DB_CONNECTION=pg npm run bench:callbacks         # PostgreSQL database callbacks_bench
|   BENCH_CALLBACKS=5000 BENCH_SLOW=200 npm run bench:callbacks
|
| Boots the app in process on a fresh database (BENCH_PG_DB_NAME, default
| callbacks_bench, dropped at the end; PG_HOST, PG_PORT, PG_USER,
| PG_PASSWORD as for the app), seeds paid orders with pending callbacks
| (SQL, one multi-row INSERT per chunk), and runs merchants on 127.0.0.1 in
| a worker thread (so that they do not share the gateway's event loop): a
| fast one answering `success` at once and a slow one answering after 5 s.
| callbacks.allow_private_targets is set (the merchants are on loopback).
|
| Runs, one worker each, the settings' defaults unless
| BENCH_CONCURRENCY / BENCH_PER_HOST say otherwise:
|  1. before: main's schedule, runOnce(20) once a second (BENCH_BEFORE
|     callbacks; the ceiling is 20/s by construction);
|  2. batch back-to-back: runOnce(concurrency) in a loop, each batch waiting
|     for its slowest callback (main's batch shape without the 1 s tick);
|  3. the delivery loop on a backlog of BENCH_CALLBACKS to the fast merchant;
|  4. the same with BENCH_SLOW callbacks to the slow merchant enqueued first:
|     the fast merchant's rate should not change;
|  5. paced: callbacks enqueued one transaction each at BENCH_PACED_RATE/s
|     for 5 s while the loop runs (wake after commit): enqueue → ack.
| callbacks/s counts acknowledged deliveries from the first to the last;
| enqueue → ack is callbacks.delivered_at − created_at (for a backlog, the
| wait in the queue).
*/
import 'reflect-metadata'
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { Ignitor } from '@adonisjs/core'

const CALLBACKS = Number(process.env.BENCH_CALLBACKS ?? 5000)
const SLOW = Number(process.env.BENCH_SLOW ?? 100)
const BEFORE = Number(process.env.BENCH_BEFORE ?? 200)
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 200)
const SLOW_MS = 5000
const PG = process.env.DB_CONNECTION === 'pg'
const DB_NAME = process.env.BENCH_PG_DB_NAME ?? 'callbacks_bench'
const SQLITE_PATH =
  process.env.BENCH_SQLITE_PATH ?? join(tmpdir(), `callbacks_bench_${process.pid}.sqlite3`)

if (!/^[a-z_][a-z0-9_]*$/.test(DB_NAME))
  throw new Error(`BENCH_PG_DB_NAME must be a plain identifier, not ${DB_NAME}`)
if (PG) {
  process.env.PG_DB_NAME = DB_NAME
} else {
  process.env.DB_CONNECTION = 'sqlite'
  process.env.SQLITE_PATH = SQLITE_PATH
}
process.env.RUN_JOBS = 'false'
process.env.LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'error'
process.env.NODE_ENV ??= 'production'
process.env.INITIAL_API_SECRET ??= 'bench-secret-0123456789abcdef'

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

function removeSqlite() {
  for (const suffix of ['', '-wal', '-shm', '.migrating'])
    rmSync(SQLITE_PATH + suffix, { force: true })
}

/** The merchants, in their own thread: counts requests and sockets per merchant. */
const MERCHANTS = `
const { createServer } = require('node:http')
const { parentPort, workerData } = require('node:worker_threads')
const stats = {}
function merchant(name, delayMs) {
  stats[name] = { requests: 0, sockets: 0, open: 0, maxOpen: 0 }
  const server = createServer((request, response) => {
    const own = stats[name]
    own.open++
    own.maxOpen = Math.max(own.maxOpen, own.open)
    response.once('finish', () => own.open--)
    request.resume()
    request.on('end', () => {
      own.requests++
      setTimeout(() => { response.writeHead(200, { 'content-type': 'text/plain' }); response.end('success') }, delayMs)
    })
  })
  server.keepAliveTimeout = 15000
  server.on('connection', () => stats[name].sockets++)
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)))
}
Promise.all([merchant('fast', 0), merchant('slow', workerData.slowMs)]).then(([fast, slow]) => {
  parentPort.postMessage({ fast, slow })
})
parentPort.on('message', (message) => {
  if (message === 'stats') {
    parentPort.postMessage({ stats: JSON.parse(JSON.stringify(stats)) })
    for (const own of Object.values(stats)) own.maxOpen = own.open
  }
})
`

type Stats = Record<
  'fast' | 'slow',
  { requests: number; sockets: number; open: number; maxOpen: number }
>

function percentile(sorted: number[], p: number) {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

const APP_ROOT = new URL('../', import.meta.url)
const IMPORTER = (filePath: string) => {
  if (filePath.startsWith('./') || filePath.startsWith('../'))
    return import(new URL(filePath, APP_ROOT).href)
  return import(filePath)
}

async function main() {
  if (PG) {
    psql(`DROP DATABASE IF EXISTS ${DB_NAME}`)
    psql(`CREATE DATABASE ${DB_NAME}`)
  } else removeSqlite()

  const merchants = new Worker(MERCHANTS, { eval: true, workerData: { slowMs: SLOW_MS } })
  const ports: { fast: number; slow: number } = await new Promise((resolve) =>
    merchants.once('message', resolve)
  )
  const merchantStats = async (): Promise<Stats> => {
    merchants.postMessage('stats')
    return new Promise((resolve) => {
      const listen = (message: any) => {
        if (message.stats) {
          merchants.off('message', listen)
          resolve(message.stats)
        }
      }
      merchants.on('message', listen)
    })
  }
  const fastUrl = `http://127.0.0.1:${ports.fast}/notify`
  const slowUrl = `http://127.0.0.1:${ports.slow}/notify`

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
    const { default: settings } = await import('#settings/settings_service')
    const { default: callbackDeliverer } = await import('#callbacks/callback_deliverer')
    const { DeliveryLoop, callbackDelivery } = await import('#callbacks/delivery_loop')
    const { default: callbackOutbox } = await import('#callbacks/callback_outbox')
    const { default: Order } = await import('#models/order')
    const { closeCallbackAgents } = await import('#callbacks/safe_http')

    await installation.prepare({ print: () => {} })
    await settings.set('callbacks.allow_private_targets', 'true')
    if (process.env.BENCH_CONCURRENCY)
      await settings.set('callbacks.concurrency', process.env.BENCH_CONCURRENCY)
    if (process.env.BENCH_PER_HOST)
      await settings.set('callbacks.per_host_concurrency', process.env.BENCH_PER_HOST)
    const concurrency = await settings.get('callbacks.concurrency')
    const perHost = await settings.get('callbacks.per_host_concurrency')

    let serial = 0
    /** Paid orders (notify_url → url), with a pending callback each unless `withCallback` is false. */
    async function seed(count: number, url: string, withCallback = true): Promise<number[]> {
      const ids: number[] = []
      const now = Date.now()
      for (let start = 0; start < count; start += 500) {
        const rows = []
        for (let index = start; index < Math.min(count, start + 500); index++) {
          serial++
          rows.push({
            trade_id: `bench${process.pid}x${serial}`,
            order_id: `B-${serial}`,
            pid: '1000',
            payment_type: 'Native',
            name: 'bench',
            currency: 'CNY',
            amount: 100,
            token: 'USDT',
            network: 'tron',
            receive_address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
            actual_amount: 13.8,
            status: 2,
            notify_url: url,
            block_transaction_id: `tx-${serial}`,
            expiration_time: now + 600_000,
            paid_at: now,
            callback_status: withCallback ? 'pending' : 'none',
            created_at: now,
            updated_at: now,
          })
        }
        await db.table('orders').multiInsert(rows)
        const inserted: { id: number | string }[] = await db
          .from('orders')
          .whereIn(
            'trade_id',
            rows.map((row) => row.trade_id)
          )
          .select('id')
        const chunkIds = inserted.map((row) => Number(row.id))
        ids.push(...chunkIds)
        if (withCallback) {
          await db.table('callbacks').multiInsert(
            chunkIds.map((id) => ({
              order_id: id,
              format: 'native',
              status: 'pending',
              attempts: 0,
              next_attempt_at: now,
              last_error: '',
              created_at: now,
              updated_at: now,
            }))
          )
        }
      }
      return ids
    }

    async function clearOutbox() {
      await db.from('callback_attempts').delete()
      await db.from('callbacks').delete()
      await db.from('orders').delete()
    }

    /** Rate and enqueue → ack of the delivered callbacks to `url`. */
    async function figures(url: string) {
      const rows: { created_at: number | string; delivered_at: number | string }[] = await db
        .from('callbacks')
        .join('orders', 'orders.id', 'callbacks.order_id')
        .where('orders.notify_url', url)
        .where('callbacks.status', 'delivered')
        .select('callbacks.created_at', 'callbacks.delivered_at')
      const acked = rows.map((row) => Number(row.delivered_at))
      const latencies = rows
        .map((row) => Number(row.delivered_at) - Number(row.created_at))
        .sort((a, b) => a - b)
      const first = Math.min(...rows.map((row) => Number(row.created_at)))
      const seconds = (Math.max(...acked) - first) / 1000
      return {
        delivered: rows.length,
        rate: rows.length / Math.max(seconds, 0.001),
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
      }
    }

    /** Callbacks not delivered (a failed attempt is retried later, after the run): counts and a sample error. */
    async function undelivered(): Promise<string> {
      const rows: { status: string; last_error: string }[] = await db
        .from('callbacks')
        .whereNot('status', 'delivered')
        .select('status', 'last_error')
      if (rows.length === 0) return ''
      return `(${rows.length} not delivered: ${rows[0].status}, "${rows[0].last_error}")`
    }

    const results: {
      run: string
      delivered: number
      rate: number
      p50: number
      p99: number
      note: string
    }[] = []
    const record = (run: string, figure: Awaited<ReturnType<typeof figures>>, note = '') => {
      results.push({ run, ...figure, note })
      console.log(
        `${run.padEnd(52)} ${String(figure.delivered).padStart(6)} delivered  ${figure.rate.toFixed(0).padStart(6)} callbacks/s` +
          `  p50 ${(figure.p50 / 1000).toFixed(2)} s  p99 ${(figure.p99 / 1000).toFixed(2)} s${note ? `  ${note}` : ''}`
      )
    }
    console.log(
      `\n${PG ? 'PostgreSQL' : 'SQLite'} · callbacks.concurrency ${concurrency} · callbacks.per_host_concurrency ${perHost} · ` +
        `slow merchant answers after ${SLOW_MS / 1000} s\n`
    )

    // 1. main's schedule: 20 per run, one run per second.
    await seed(BEFORE, fastUrl)
    for (;;) {
      const tick = Date.now()
      const report = await callbackDeliverer.runOnce(20)
      if (report.claimed === 0) break
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - tick))))
    }
    record(`before: runOnce(20) every second (${BEFORE})`, await figures(fastUrl))
    await clearOutbox()

    // 2. batches back to back: each waits for its slowest callback.
    await seed(CALLBACKS, fastUrl)
    let batch = await callbackDeliverer.runOnce(concurrency)
    while (batch.claimed > 0) batch = await callbackDeliverer.runOnce(concurrency)
    record(`batch: runOnce(${concurrency}) back to back`, await figures(fastUrl))
    await clearOutbox()

    // 3. the delivery loop, fast merchant only.
    let before = await merchantStats()
    await seed(CALLBACKS, fastUrl)
    await new DeliveryLoop(callbackDeliverer, { untilIdle: true }).run()
    let after = await merchantStats()
    record(
      'loop: fast merchant only',
      await figures(fastUrl),
      `(${after.fast.requests - before.fast.requests} requests on ${after.fast.sockets - before.fast.sockets} new connections)` +
        (await undelivered())
    )
    const loopOnly = results.at(-1)!
    await clearOutbox()

    // 4. the loop with a slow merchant's callbacks due first.
    before = await merchantStats()
    await seed(SLOW, slowUrl)
    await seed(CALLBACKS, fastUrl)
    const mixed = new DeliveryLoop(callbackDeliverer, { untilIdle: true }).run()
    await mixed
    after = await merchantStats()
    record(`loop: fast merchant, ${SLOW} slow ones due first`, await figures(fastUrl))
    record(`     the slow merchant's (${SLOW_MS / 1000} s each)`, await figures(slowUrl))
    const fastMixed = results.at(-2)!
    console.log(
      `     fast rate with the slow merchant ÷ without: ${(fastMixed.rate / loopOnly.rate).toFixed(2)}` +
        ` · most requests open at once: slow merchant ${after.slow.maxOpen}, fast ${after.fast.maxOpen}` +
        ` (per_host_concurrency ${perHost})`
    )
    await clearOutbox()

    // 5. paced enqueues through the outbox (wake after commit).
    const orderIds = await seed(PACED_RATE * 5, fastUrl, false)
    const orders = await Order.query().whereIn('id', orderIds).orderBy('id')
    await callbackDelivery.start()
    const started = Date.now()
    for (const [index, order] of orders.entries()) {
      const due = started + (index * 1000) / PACED_RATE
      const wait = due - Date.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      await db.transaction((trx) => callbackOutbox.enqueue(trx, order))
    }
    for (;;) {
      const [{ left }] = await db.from('callbacks').where('status', 'pending').count('* as left')
      if (Number(left) === 0) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await callbackDelivery.stop()
    record(
      `paced: ${PACED_RATE}/s enqueued for 5 s, loop running`,
      await figures(fastUrl),
      '(rate: as fast as the enqueues went; enqueue → ack: wake after commit)'
    )

    await closeCallbackAgents()
    console.log(
      `\ngoal ≥ 500 callbacks/s (one worker, local merchant): ${loopOnly.rate >= 500 ? 'met' : 'NOT met'} (${loopOnly.rate.toFixed(0)}/s)`
    )
    process.exitCode = loopOnly.rate >= 500 ? 0 : 1
  } finally {
    await merchants.terminate()
    await app.terminate()
    if (PG) psql(`DROP DATABASE IF EXISTS ${DB_NAME}`)
    else removeSqlite()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
