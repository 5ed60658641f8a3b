/*
|--------------------------------------------------------------------------
| Benchmark: order creation throughput and latency
|--------------------------------------------------------------------------
|
|   npm run bench                          # SQLite (temporary file)
|   DB_CONNECTION=pg npm run bench         # PostgreSQL database gateway_bench
|   BENCH_ORDERS=5000 BENCH_CONCURRENCY=100 BENCH_WALLETS=10 npm run bench
|
| Starts the real server (bin/server.ts) on a throw-away database, adds
| wallets and a rate with the ace commands, then sends signed creates.
| Two rounds: every order for the same fiat amount (the allocator's worst
| case: each order must step past the taken amounts) and distinct amounts.
*/
import { spawn, spawnSync } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBase58check } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2'

const ORDERS = Number(process.env.BENCH_ORDERS ?? 2000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50)
const WALLETS = Number(process.env.BENCH_WALLETS ?? 10)
const SECRET = 'bench-secret-0123456789abcdef'
const root = new URL('../', import.meta.url).pathname

const usePg = process.env.DB_CONNECTION === 'pg'
const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'))
const dbEnv: Record<string, string> = usePg
  ? { DB_CONNECTION: 'pg', PG_DB_NAME: process.env.BENCH_PG_DB_NAME ?? 'gateway_bench' }
  : { DB_CONNECTION: 'sqlite', SQLITE_PATH: join(dir, 'bench.sqlite3') }

function psql(sql: string) {
  spawnSync('psql', ['-h', process.env.PG_HOST ?? '127.0.0.1', '-U', process.env.PG_USER ?? 'postgres', '-c', sql], {
    stdio: 'ignore',
  })
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

function tronAddress(): string {
  return createBase58check(sha256).encode(Uint8Array.from([0x41, ...randomBytes(20)]))
}

function sign(params: Record<string, string | number>) {
  const message = Object.keys(params)
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&')
  return createHmac('sha256', SECRET).update(message).digest('hex')
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function main() {
  if (usePg) {
    psql(`DROP DATABASE IF EXISTS ${dbEnv.PG_DB_NAME}`)
    psql(`CREATE DATABASE ${dbEnv.PG_DB_NAME}`)
  }
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const env = {
    ...process.env,
    ...dbEnv,
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    RUN_JOBS: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    APP_URL: url,
    INITIAL_API_SECRET: SECRET,
  }
  const ace = (...args: string[]) => {
    const result = spawnSync(process.execPath, ['ace.js', ...args], { cwd: root, env, encoding: 'utf8' })
    if (result.status !== 0) throw new Error(`ace ${args.join(' ')}: ${result.stderr}`)
  }

  const server = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []), '--import=@poppinss/ts-exec', 'bin/server.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', process.env.BENCH_LOG_LEVEL ? 'inherit' : 'ignore', 'inherit'],
  })
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      try {
        if ((await fetch(`${url}/payments/native/v1/config`)).ok) break
      } catch {}
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    for (let index = 0; index < WALLETS; index++) ace('wallet:add', 'tron', tronAddress())
    ace('rate:set', 'USDT', 'CNY', '7.25')
    ace('settings:set', 'rate_limit.create_per_minute', '0')
    ace('settings:set', 'order.amount_max_steps', String(Math.ceil(ORDERS / WALLETS) + 10))
    await new Promise((resolve) => setTimeout(resolve, 2500)) // settings refresh window

    console.log(
      `database: ${usePg ? 'PostgreSQL' : 'SQLite'}, orders per round: ${ORDERS}, ` +
        `concurrency: ${CONCURRENCY}, wallets: ${WALLETS}, node ${process.version}`
    )
    for (const round of ['same amount', 'distinct amounts'] as const) {
      const latencies: number[] = []
      let failures = 0
      let next = 0
      const started = performance.now()
      const worker = async () => {
        while (next < ORDERS) {
          const index = next++
          const params: Record<string, string | number> = {
            pid: '1000',
            order_id: `${round === 'same amount' ? 's' : 'd'}-${index}`,
            currency: 'cny',
            amount: round === 'same amount' ? 100 : 100 + index,
            token: 'usdt',
            network: 'tron',
            notify_url: 'https://shop.example/notify',
          }
          const t0 = performance.now()
          const response = await fetch(`${url}/payments/native/v1/order/create-transaction`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ ...params, signature: sign(params) }),
          })
          const body = (await response.json()) as { status_code: number }
          latencies.push(performance.now() - t0)
          if (body.status_code !== 200) failures++
        }
      }
      await Promise.all(Array.from({ length: CONCURRENCY }, worker))
      const seconds = (performance.now() - started) / 1000
      latencies.sort((a, b) => a - b)
      console.log(
        `${round.padEnd(17)} ${(ORDERS / seconds).toFixed(0).padStart(6)} orders/s   ` +
          `p50 ${percentile(latencies, 50).toFixed(1)} ms   p95 ${percentile(latencies, 95).toFixed(1)} ms   ` +
          `p99 ${percentile(latencies, 99).toFixed(1)} ms   failures ${failures}`
      )
    }
  } finally {
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
    rmSync(dir, { recursive: true, force: true })
    if (usePg) psql(`DROP DATABASE IF EXISTS ${dbEnv.PG_DB_NAME}`)
  }
}

await main()
