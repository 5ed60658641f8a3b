/*
|--------------------------------------------------------------------------
| Shutdown under load and a database outage, as clients see them
|--------------------------------------------------------------------------
|
|   node --import=@poppinss/ts-exec bench/ops_resilience.ts                    # SQLite: shutdown only
|   DB_CONNECTION=pg node --import=@poppinss/ts-exec bench/ops_resilience.ts   # PostgreSQL: both
|
| Starts the real server (bin/server.ts) on a throw-away database (SQLite:
| a temporary file; PostgreSQL: database `ops_bench`, created and dropped,
| reached through a TCP proxy of this script) and keeps 32 keep-alive
| clients sending signed creates.
|
| 1. SIGTERM under load: after 2 s the server gets SIGTERM. Prints how the
|    requests sent ended (HTTP status, cut after being sent, refused at
|    connect: the listener is closed) and the exit code.
| 2. Database down 15 s (PostgreSQL): the proxy is closed for 15 s, then
|    opened. Prints the answers during the outage (status, Retry-After)
|    and how long after the database returned the first create succeeded.
|
| OPS_BENCH_ROOT=/path/to/another/checkout runs that checkout's server (a
| before/after comparison from one script).
*/
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const SECRET = 'ops-bench-secret-0123456789abcdef'
const WALLET = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'
const CONCURRENCY = 32
const root = process.env.OPS_BENCH_ROOT ?? new URL('../', import.meta.url).pathname
const isPg = process.env.DB_CONNECTION === 'pg'
const PG = {
  host: process.env.PG_HOST ?? '127.0.0.1',
  port: Number(process.env.PG_PORT ?? 5432),
  user: process.env.PG_USER ?? 'postgres',
  database: 'ops_bench',
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

/** A TCP proxy to PostgreSQL that can be cut (every connection through it closed) and reopened. */
class Proxy {
  #server: net.Server | null = null
  #sockets = new Set<net.Socket>()
  port = 0
  async up() {
    const server = net.createServer((client) => {
      const upstream = net.connect(PG.port, PG.host)
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket)
        socket.once('close', () => this.#sockets.delete(socket))
        socket.on('error', () => {})
      }
      client.pipe(upstream).pipe(client)
      client.once('close', () => upstream.destroy())
      upstream.once('close', () => client.destroy())
    })
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', () => resolve()))
    const address = server.address()
    this.port = typeof address === 'object' && address ? address.port : 0
    this.#server = server
  }
  async down() {
    const server = this.#server
    this.#server = null
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

function psql(sql: string) {
  const result = spawnSync(
    'psql',
    ['-h', PG.host, '-p', String(PG.port), '-U', PG.user, '-d', 'postgres', '-qc', sql],
    {
      encoding: 'utf8',
    }
  )
  if (result.status !== 0) throw new Error(`psql: ${result.stderr}`)
}

type Gateway = { url: string; child: ChildProcess; env: NodeJS.ProcessEnv; cleanup: () => void }

async function startGateway(proxy: Proxy | null): Promise<Gateway> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const dir = mkdtempSync(join(tmpdir(), 'ops-bench-'))
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    RUN_JOBS: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    APP_URL: url,
    INITIAL_API_SECRET: SECRET,
    ...(isPg
      ? {
          DB_CONNECTION: 'pg',
          PG_HOST: '127.0.0.1',
          PG_PORT: String(proxy!.port),
          PG_USER: PG.user,
          PG_DB_NAME: PG.database,
        }
      : { DB_CONNECTION: 'sqlite', SQLITE_PATH: join(dir, 'ops.sqlite3') }),
  }
  const child = spawn(process.execPath, ['--import=@poppinss/ts-exec', 'bin/server.ts'], {
    cwd: root,
    env,
    // stderr: the first start prints the generated secrets there; not wanted in the figures.
    stdio: ['ignore', 'ignore', 'ignore'],
  })
  const cleanup = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  for (let attempt = 0; attempt < 300; attempt++) {
    const up = await fetch(`${url}/payments/native/v1/config`).then(
      (response) => response.ok,
      () => false
    )
    if (up) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  // Not spawnSync: the database proxy lives in this process's event loop.
  const ace = (...args: string[]) =>
    new Promise<void>((resolve, reject) => {
      let output = ''
      const command = spawn(process.execPath, ['ace.js', ...args], {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      command.stdout.on('data', (chunk) => (output += chunk))
      command.stderr.on('data', (chunk) => (output += chunk))
      command.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`ace ${args.join(' ')}: ${output}`))
      )
    })
  await ace('wallet:add', 'tron', WALLET)
  await ace('rate:set', 'USDT', 'CNY', '7.25')
  await ace('settings:set', 'rate_limit.create_per_minute', '0')
  await ace('settings:set', 'order.amount_max_steps', '10000')
  return { url, child, env, cleanup }
}

let orderNumber = 0
function createBody() {
  orderNumber++
  const params: Record<string, string> = {
    pid: '1000',
    order_id: `ops-${process.pid}-${orderNumber}`,
    currency: 'cny',
    // Distinct amounts: no stepping past taken ones.
    amount: (10 + orderNumber / 100).toFixed(2),
    token: 'usdt',
    network: 'tron',
    notify_url: 'https://shop.example/notify',
  }
  const message = Object.keys(params)
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&')
  return JSON.stringify({
    ...params,
    signature: createHmac('sha256', SECRET).update(message).digest('hex'),
  })
}

type Outcome = { kind: string; at: number }

/** One create; how it ended: `HTTP 200`, `HTTP 503 (Retry-After 5)`, `cut after sending`, `refused at connect`. */
function createOnce(url: string, agent: http.Agent): Promise<Outcome> {
  return new Promise((resolve) => {
    let connected = false
    const request = http.request(
      `${url}/payments/native/v1/order/create-transaction`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'accept': 'application/json' },
      },
      (response) => {
        response.resume()
        response.on('end', () => {
          const retry = response.headers['retry-after']
            ? ` (Retry-After ${response.headers['retry-after']})`
            : ''
          resolve({ kind: `HTTP ${response.statusCode}${retry}`, at: Date.now() })
        })
      }
    )
    request.on('socket', (socket) => {
      if (!socket.connecting) connected = true
      else socket.once('connect', () => (connected = true))
    })
    request.on('error', (error: NodeJS.ErrnoException) => {
      const kind =
        error.code === 'ECONNREFUSED' && !connected
          ? 'refused at connect (listener closed)'
          : `cut after sending (${error.code ?? error.message})`
      resolve({ kind, at: Date.now() })
    })
    request.end(createBody())
  })
}

/** CONCURRENCY clients in a loop until `stop()` says so; every outcome recorded. */
function load(url: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const outcomes: Outcome[] = []
  let running = true
  const clients = Array.from({ length: CONCURRENCY }, async () => {
    while (running) {
      const outcome = await createOnce(url, agent)
      outcomes.push(outcome)
      if (outcome.kind.startsWith('refused'))
        await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })
  return {
    outcomes,
    async stop() {
      running = false
      await Promise.all(clients)
      agent.destroy()
    },
  }
}

function tally(outcomes: Outcome[], from = 0, to = Number.POSITIVE_INFINITY) {
  const counts = new Map<string, number>()
  for (const outcome of outcomes) {
    if (outcome.at < from || outcome.at > to) continue
    counts.set(outcome.kind, (counts.get(outcome.kind) ?? 0) + 1)
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([kind, count]) => `    ${String(count).padStart(6)}  ${kind}`)
    .join('\n')
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function shutdownUnderLoad(proxy: Proxy | null) {
  const gateway = await startGateway(proxy)
  try {
    const exit = new Promise<string>((resolve) =>
      gateway.child.once('exit', (code, signal) =>
        resolve(signal ? `signal ${signal}` : `code ${code}`)
      )
    )
    const run = load(gateway.url)
    await sleep(2000)
    const signalAt = Date.now()
    gateway.child.kill('SIGTERM')
    // The clients keep going; a process they keep alive is reported, then killed.
    const exited = await Promise.race([exit, sleep(30_000).then(() => null)])
    const exitMs = Date.now() - signalAt
    await run.stop()
    if (exited === null) gateway.child.kill('SIGKILL')
    console.log(`1. SIGTERM under load (${CONCURRENCY} keep-alive clients, creates)`)
    console.log(`  before the signal:\n${tally(run.outcomes, 0, signalAt)}`)
    console.log(`  after the signal:\n${tally(run.outcomes, signalAt)}`)
    console.log(
      exited === null
        ? '  process still running 30 s after SIGTERM (killed)'
        : `  process exited with ${exited}, ${exitMs} ms after SIGTERM`
    )
  } finally {
    gateway.cleanup()
  }
}

async function databaseDown(proxy: Proxy) {
  const gateway = await startGateway(proxy)
  try {
    const run = load(gateway.url)
    await sleep(3000)
    const downAt = Date.now()
    await proxy.down()
    await sleep(15_000)
    await proxy.up()
    const upAt = Date.now()
    let firstOk: number | null = null
    while (Date.now() - upAt < 30_000) {
      firstOk =
        run.outcomes.find((outcome) => outcome.at > upAt && outcome.kind === 'HTTP 200')?.at ?? null
      if (firstOk) break
      await sleep(50)
    }
    await sleep(2000)
    await run.stop()
    console.log(
      `2. Database down 15 s (PostgreSQL behind a proxy, ${CONCURRENCY} keep-alive clients, creates)`
    )
    console.log(`  during the outage:\n${tally(run.outcomes, downAt, upAt)}`)
    console.log(`  after it:\n${tally(run.outcomes, upAt)}`)
    console.log(
      `  first create answered 200 ${firstOk === null ? 'never (30 s)' : `${firstOk - upAt} ms`} after the database returned`
    )
    gateway.child.kill('SIGTERM')
  } finally {
    gateway.cleanup()
  }
}

async function main() {
  console.log(
    `server: ${root}bin/server.ts · ${isPg ? 'PostgreSQL' : 'SQLite'} · ${new Date().toISOString()}`
  )
  let proxy: Proxy | null = null
  if (isPg) {
    psql(`DROP DATABASE IF EXISTS ${PG.database}`)
    psql(`CREATE DATABASE ${PG.database}`)
    proxy = new Proxy()
    await proxy.up()
  }
  try {
    await shutdownUnderLoad(proxy)
    if (proxy) {
      psql(`DROP DATABASE IF EXISTS ${PG.database} WITH (FORCE)`)
      psql(`CREATE DATABASE ${PG.database}`)
      await databaseDown(proxy)
    }
  } finally {
    await proxy?.down()
    if (isPg) psql(`DROP DATABASE IF EXISTS ${PG.database} WITH (FORCE)`)
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
