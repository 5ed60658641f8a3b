/*
|--------------------------------------------------------------------------
| Benchmark: operator notifications through their outbox
|--------------------------------------------------------------------------
|
|   npm run bench:notifications                     # SQLite (file in the OS temp dir)
|   DB_CONNECTION=pg npm run bench:notifications    # PostgreSQL database notify_bench
|   BENCH_EVENTS=2000 BENCH_PACED_RATE=50 npm run bench:notifications
|
| Boots the app in process on a fresh database, turns the webhook channel on
| towards a receiver on 127.0.0.1 (its own thread, answering 200 at once and
| noting when each notification arrived), and prints side by side:
|  1. backlog: BENCH_EVENTS events raised, then one worker's loop started:
|     events per second from the first arrival to the last;
|  2. the same with the e-mail channel on too, pointed at a server that
|     accepts connections and never answers (each attempt waits for its
|     timeout): the webhook's rate should not change (each channel has a loop
|     of its own: one that hangs is in nobody's way);
|  3. paced: events raised one at a time at BENCH_PACED_RATE a second for 5 s
|     while the loop runs: latency from the raise to the receiver (p50, p95,
|     max), the worker woken by each raise.
*/
import 'reflect-metadata'
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { Ignitor } from '@adonisjs/core'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000)
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 50)
const PG = process.env.DB_CONNECTION === 'pg'
const DB_NAME = process.env.BENCH_PG_DB_NAME ?? 'notify_bench'
const SQLITE_PATH = join(tmpdir(), `notify_bench_${process.pid}.sqlite3`)

if (!/^[a-z_][a-z0-9_]*$/.test(DB_NAME))
  throw new Error(`BENCH_PG_DB_NAME must be a plain identifier, not ${DB_NAME}`)
if (PG) process.env.PG_DB_NAME = DB_NAME
else {
  process.env.DB_CONNECTION = 'sqlite'
  process.env.SQLITE_PATH = SQLITE_PATH
}
process.env.RUN_JOBS = 'false'
process.env.LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'fatal'
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
  for (const suffix of ['', '-wal', '-shm']) rmSync(SQLITE_PATH + suffix, { force: true })
}

/** The receiver, in its own thread: the arrival time of each notification by event id. */
const RECEIVER = `
const { createServer } = require('node:http')
const { parentPort } = require('node:worker_threads')
let arrivals = {}
const server = createServer((request, response) => {
  let body = ''
  request.on('data', (chunk) => (body += chunk))
  request.on('end', () => {
    try { arrivals[JSON.parse(body).id.split(':')[0]] = Date.now() } catch {}
    response.writeHead(200, { 'content-type': 'text/plain' })
    response.end('ok')
  })
})
server.keepAliveTimeout = 15000
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }))
parentPort.on('message', (message) => {
  if (message === 'take') {
    parentPort.postMessage({ arrivals })
    arrivals = {}
  }
})
`

/** A mail server that accepts connections and never says a word (each client waits for its timeout). */
function silentServer(): Promise<{ port: number; close: () => void }> {
  return new Promise((resolve) => {
    const sockets = new Set<import('node:net').Socket>()
    const server = createServer((socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
    })
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      resolve({
        port,
        close: () => {
          for (const socket of sockets) socket.destroy()
          server.close()
        },
      })
    })
  })
}

function percentile(sorted: number[], p: number) {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

const APP_ROOT = new URL('../', import.meta.url)
const IMPORTER = (filePath: string) =>
  filePath.startsWith('./') || filePath.startsWith('../')
    ? import(new URL(filePath, APP_ROOT).href)
    : import(filePath)

async function main() {
  if (PG) {
    psql(`DROP DATABASE IF EXISTS ${DB_NAME}`)
    psql(`CREATE DATABASE ${DB_NAME}`)
  } else removeSqlite()
  const receiver = new Worker(RECEIVER, { eval: true })
  const { port } = await new Promise<{ port: number }>((resolve) =>
    receiver.once('message', resolve)
  )
  const take = () =>
    new Promise<Record<string, number>>((resolve) => {
      receiver.once('message', (message) => resolve(message.arrivals))
      receiver.postMessage('take')
    })

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
    const { raiseNotification } = await import('#notifications/notifier')
    const { notificationDelivery } = await import('#notifications/notification_delivery')
    const { closeCallbackAgents } = await import('#callbacks/safe_http')
    await installation.prepare({ print: () => {} })
    await settings.setMany({
      'notify.webhook.enabled': 'true',
      'notify.webhook.url': `http://127.0.0.1:${port}/hook`,
      'notify.webhook.secret': 'bench-webhook-secret',
      'notify.webhook.allow_private_targets': 'true',
      'notify.webhook.cap_per_hour': '0',
    })

    const rows: string[][] = []
    const data = (index: number) => ({
      trade_id: `T${index}`,
      order_id: `o${index}`,
      amount: '1',
      token: 'USDT',
      network: 'tron',
    })

    /** Raises `count` events, then runs the loop until the receiver has them all. */
    async function backlog(label: string) {
      const raised = new Map<string, number>()
      for (let index = 0; index < EVENTS; index++) {
        const id = await raiseNotification('order.paid', data(index))
        raised.set(String(id), Date.now())
      }
      notificationDelivery.start({ pollMs: 50 })
      const arrivals: Record<string, number> = {}
      while (Object.keys(arrivals).length < EVENTS) {
        Object.assign(arrivals, await take())
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      await notificationDelivery.stop()
      const times = Object.values(arrivals).sort((a, b) => a - b)
      const seconds = (times[times.length - 1] - times[0]) / 1000
      rows.push([
        label,
        `${EVENTS}`,
        `${(EVENTS / Math.max(seconds, 0.001)).toFixed(0)}/s`,
        '',
        '',
        '',
      ])
    }

    await backlog('backlog, webhook only')

    const silent = await silentServer()
    await settings.setMany({
      'notify.email.enabled': 'true',
      'notify.email.host': '127.0.0.1',
      'notify.email.port': String(silent.port),
      'notify.email.tls': 'none',
      'notify.email.from': 'bench@gateway.example',
      'notify.email.recipients': 'ops@example.com',
      'notify.email.cap_per_hour': '0',
    })
    await backlog('backlog, e-mail server hanging too')
    silent.close()
    const [mail] = await db
      .from('notification_deliveries')
      .where('channel', 'email')
      .select(db.raw('count(*) as count'), db.raw('sum(attempts) as attempts'))
    await settings.set('notify.email.enabled', 'false')

    notificationDelivery.start({ pollMs: 1000 })
    const raised = new Map<string, number>()
    const pacedCount = PACED_RATE * 5
    const started = Date.now()
    for (let index = 0; index < pacedCount; index++) {
      const due = started + (index * 1000) / PACED_RATE
      const wait = due - Date.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      const at = Date.now()
      raised.set(String(await raiseNotification('order.paid', data(index))), at)
    }
    const arrivals: Record<string, number> = {}
    while (Object.keys(arrivals).filter((id) => raised.has(id)).length < pacedCount) {
      Object.assign(arrivals, await take())
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await notificationDelivery.stop()
    const latencies = [...raised].map(([id, at]) => arrivals[id] - at).sort((a, b) => a - b)
    rows.push([
      `paced, ${PACED_RATE}/s for 5 s`,
      `${pacedCount}`,
      '',
      `${percentile(latencies, 50)} ms`,
      `${percentile(latencies, 95)} ms`,
      `${latencies[latencies.length - 1]} ms`,
    ])

    console.log(
      `\nnotifications · ${PG ? 'PostgreSQL' : 'SQLite'} · one worker · webhook receiver on 127.0.0.1\n`
    )
    const head = ['run', 'events', 'delivered', 'raise → receiver p50', 'p95', 'max']
    const widths = head.map(
      (title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)) + 2
    )
    for (const row of [head, ...rows])
      console.log(row.map((cell, column) => cell.padEnd(widths[column])).join(''))
    console.log(
      `\nthe e-mail channel (its server hanging) meanwhile: ${Number(mail.count)} mails, ${Number(mail.attempts)} attempt(s), none delivered (waiting for their retry)`
    )
    await closeCallbackAgents()
  } finally {
    await receiver.terminate()
    await app.terminate()
    if (PG) psql(`DROP DATABASE IF EXISTS ${DB_NAME}`)
    else removeSqlite()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
