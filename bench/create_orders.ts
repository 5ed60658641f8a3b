/*
|--------------------------------------------------------------------------
| Benchmark: order creation next to the database's own speed
|--------------------------------------------------------------------------
|
|   npm run bench                          # SQLite (temporary file)
|   DB_CONNECTION=pg npm run bench         # PostgreSQL (database create_bench, dropped after)
|
| Boots the real gateway (bin/server.ts, NODE_ENV=production, RUN_JOBS=false,
| BENCH_ROUTES=true) on a fresh database, adds BENCH_WALLETS TRON wallets and
| a fixed rate with the ace commands, then loads it from this process with
| undici (keep-alive pool of BENCH_CONNECTIONS connections, BENCH_SECONDS per
| round) and prints, side by side:
|
|   - a bare route of the gateway doing one Lucid INSERT, and one doing a raw
|     INSERT through the same connection (start/bench_routes.ts);
|   - create-transaction with distinct amounts, its ratio to the bare route;
|   - SQL statements per create (BEGIN/COMMIT included: knex `query` events
|     counted by the server over sequential creates);
|   - create again after seeding 100,000 waiting orders with their locks on
|     the same network and amounts, and the ratio of the two;
|   - the plans of the allocator's two reads of amount_locks.
|
| The load generator's own CPU time is printed with each round.
|
| Other knobs: BENCH_SECONDS (10), BENCH_CONNECTIONS (32), BENCH_WALLETS (10),
| BENCH_OPEN_ORDERS (100000), BENCH_APP_ROOT (run another checkout's server,
| e.g. the code before a change, with this script), BENCH_PG_DB_NAME,
| BENCH_NODE_ARGS (the server's node flags, e.g. --cpu-prof), BENCH_WARMUP (seconds per
| target before the rounds, 6), BENCH_DROP_INDEXES
| (comma-separated index names dropped before the rounds, or `console` for
| the nine of migration 1763700000070: what they cost order creation).
*/
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir, cpus } from 'node:os'
import { createServer } from 'node:http'
import { stripVTControlCharacters } from 'node:util'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Pool } from 'undici'
import { freePort, nativeSign, tronAddress } from './bench_support.js'
// @ts-expect-error better-sqlite3 ships no types (knex's driver for SQLite)
import Database from 'better-sqlite3'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const WALLETS = Number(process.env.BENCH_WALLETS ?? 10)
const OPEN_ORDERS = Number(process.env.BENCH_OPEN_ORDERS ?? 100_000)
const SLICE = Number(process.env.BENCH_SLICE ?? 2)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 6)
const SECRET = 'bench-secret-0123456789abcdef'
const root = process.env.BENCH_APP_ROOT ?? new URL('../', import.meta.url).pathname

const usePg = process.env.DB_CONNECTION === 'pg'
const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'))
const pgDb = process.env.BENCH_PG_DB_NAME ?? 'create_bench'
const sqlitePath = join(dir, 'bench.sqlite3')
const dbEnv: Record<string, string> = usePg
  ? { DB_CONNECTION: 'pg', PG_DB_NAME: pgDb }
  : { DB_CONNECTION: 'sqlite', SQLITE_PATH: sqlitePath }

function psql(sql: string, database = 'postgres'): string {
  const result = spawnSync(
    'psql',
    [
      '-h',
      process.env.PG_HOST ?? '127.0.0.1',
      '-U',
      process.env.PG_USER ?? 'postgres',
      '-d',
      database,
      '-X',
      '-q',
      '-A',
      '-t',
      '-c',
      sql,
    ],
    { encoding: 'utf8' }
  )
  if (result.status !== 0) throw new Error(`psql: ${result.stderr}`)
  return result.stdout
}

const sign = (params: Record<string, string | number>) => nativeSign(params, SECRET)

function percentile(sorted: number[], p: number) {
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

type Round = {
  name: string
  rps: number
  p50: number
  p99: number
  failures: number
  requests: number
  loaderCpu: number
}

let createSeq = 0
/** A signed create body for a fresh order number and a fiat amount no other create of this run uses. */
function createBody(prefix: string) {
  const index = createSeq++
  const params: Record<string, string | number> = {
    pid: '1000',
    order_id: `${prefix}-${index}`,
    currency: 'cny',
    amount: 100 + index,
    token: 'usdt',
    network: 'tron',
    notify_url: 'https://shop.example/notify',
  }
  return JSON.stringify({ ...params, signature: sign(params) })
}

type Target = { name: string; path: string; makeBody: () => string }
type Tally = { latencies: number[]; failures: number; seconds: number; cpuMs: number }

/**
 * Keeps CONNECTIONS requests in flight on `target` for `seconds` (closed
 * loop). Bodies are made before the clock starts, so the loader's CPU is the
 * HTTP work itself.
 */
async function slice(pool: Pool, target: Target, seconds: number, tally: Tally) {
  const bodies = Array.from({ length: Math.max(500, Math.ceil(seconds * 4000)) }, target.makeBody)
  let next = 0
  const cpu0 = process.cpuUsage()
  const started = performance.now()
  const deadline = started + seconds * 1000
  const worker = async () => {
    while (performance.now() < deadline && next < bodies.length) {
      const body = bodies[next++]
      const t0 = performance.now()
      try {
        const response = await pool.request({
          path: target.path,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        const text = await response.body.text()
        tally.latencies.push(performance.now() - t0)
        if (response.statusCode !== 200 || !text.includes('"status_code":200')) {
          tally.failures++
          if (tally.failures <= 3)
            console.error(`  ${target.name}: ${response.statusCode} ${text.slice(0, 200)}`)
        }
      } catch (error) {
        tally.failures++
        if (tally.failures <= 3) console.error(`  ${target.name}: ${(error as Error).message}`)
      }
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, worker))
  tally.seconds += (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpu0)
  tally.cpuMs += (cpu.user + cpu.system) / 1000
}

/**
 * SECONDS on each target, taken in turns of SLICE seconds (A B C A B C …), so
 * that whatever else the machine does weighs on all of them alike.
 */
async function load(pool: Pool, targets: Target[], seconds = SECONDS): Promise<Round[]> {
  const tallies = targets.map(() => ({
    latencies: [] as number[],
    failures: 0,
    seconds: 0,
    cpuMs: 0,
  }))
  const turns = Math.max(1, Math.round(seconds / SLICE))
  for (let turn = 0; turn < turns; turn++) {
    for (const [index, target] of targets.entries())
      await slice(pool, target, seconds / turns, tallies[index])
  }
  return targets.map((target, index) => {
    const tally = tallies[index]
    tally.latencies.sort((a, b) => a - b)
    return {
      name: target.name,
      rps: tally.latencies.length / tally.seconds,
      p50: percentile(tally.latencies, 50),
      p99: percentile(tally.latencies, 99),
      failures: tally.failures,
      requests: tally.latencies.length,
      loaderCpu: tally.cpuMs / (tally.seconds * 1000),
    }
  })
}

async function statementsPer(
  pool: Pool,
  path: string,
  makeBody: () => string,
  count = 200
): Promise<number> {
  const read = async () => {
    const response = await pool.request({ path: '/__bench/statements', method: 'GET' })
    return ((await response.body.json()) as { data: { statements: number } }).data.statements
  }
  const before = await read()
  for (let index = 0; index < count; index++) {
    const response = await pool.request({
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: makeBody(),
    })
    const text = await response.body.text()
    if (!text.includes('"status_code":200')) throw new Error(`${path}: ${text.slice(0, 200)}`)
  }
  return (await read()) - before
}

/**
 * OPEN_ORDERS waiting orders with their locks on the bench's wallets, amounts
 * from 10.01 USDT up by 0.01 (overlapping the creates'), pairs already held skipped.
 */
function seedOpenOrders(addresses: string[]) {
  const now = Date.now()
  const wallets = addresses.map((address, index) => `(${index}, '${address}')`).join(', ')
  const columns =
    'trade_id, order_id, api_key_id, pid, payment_type, currency, amount, token, network, receive_address, actual_amount, status, notify_url, expiration_time, created_at, updated_at'
  const select = (amount: string) =>
    `SELECT 'seed' || n, 'seed-' || n, (SELECT id FROM api_keys WHERE pid = '1000'), '1000', 'Native', 'CNY', 1, 'USDT', 'tron', w.address, ${amount}, 1, 'https://shop.example/notify', ${now + 86_400_000}, ${now}, ${now}
     FROM g JOIN w ON w.i = n % ${addresses.length}
     WHERE NOT EXISTS (SELECT 1 FROM amount_locks l WHERE l.network = 'tron' AND l.token = 'USDT' AND l.address = w.address AND l.amount = ${amount})
     LIMIT ${OPEN_ORDERS}`
  const locks = `INSERT INTO amount_locks (network, address, token, amount, order_id, expires_at, created_at)
     SELECT network, receive_address, token, actual_amount, id, expiration_time, created_at FROM orders WHERE trade_id LIKE 'seed%'`
  if (usePg) {
    psql(
      `WITH g AS (SELECT generate_series(1, ${Math.ceil(OPEN_ORDERS * 1.2)}) AS n), w(i, address) AS (VALUES ${wallets})
       INSERT INTO orders (${columns}) ${select('10 + n * 0.01')}; ${locks}; ANALYZE orders; ANALYZE amount_locks`,
      pgDb
    )
    return
  }
  const sqlite = new Database(sqlitePath)
  sqlite.pragma('busy_timeout = 10000')
  sqlite.exec(
    `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${Math.ceil(OPEN_ORDERS * 1.2)}), w(i, address) AS (VALUES ${wallets})
     INSERT INTO orders (${columns}) ${select('round(10 + n * 0.01, 2)')}; ${locks}; ANALYZE`
  )
  sqlite.close()
}

const CONSOLE_INDEXES = [
  'orders_created_at_id_index',
  'orders_status_created_at_index',
  'orders_network_created_at_index',
  'orders_token_created_at_index',
  'orders_pid_created_at_index',
  'orders_payment_type_created_at_index',
  'orders_order_id_index',
  'orders_receive_address_created_at_index',
  'orders_block_transaction_id_index',
]

/** BENCH_DROP_INDEXES: the indexes whose cost on creation is measured by their absence. */
function dropIndexes(): string[] {
  const wanted = (process.env.BENCH_DROP_INDEXES ?? '').trim()
  if (wanted === '') return []
  const names =
    wanted === 'console' ? CONSOLE_INDEXES : wanted.split(',').map((name) => name.trim())
  for (const name of names) {
    if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not an index name: ${name}`)
    if (usePg) psql(`DROP INDEX IF EXISTS ${name}`, pgDb)
    else {
      const sqlite = new Database(sqlitePath)
      sqlite.pragma('busy_timeout = 10000')
      sqlite.exec(`DROP INDEX IF EXISTS ${name}`)
      sqlite.close()
    }
  }
  return names
}

/** The plans of the allocator's reads of amount_locks (the taken range and the free-pair probe). */
function plans(addresses: string[]): string {
  const list = addresses.map((address) => `'${address}'`).join(', ')
  const taken = `SELECT address, amount FROM amount_locks WHERE network = 'tron' AND token = 'USDT' AND address IN (${list}) AND amount >= 13.8 AND amount <= 14.0`
  const probe = `SELECT 1 FROM amount_locks l WHERE l.network = 'tron' AND l.token = 'USDT' AND l.address = '${addresses[0]}' AND l.amount = 13.8`
  if (usePg) {
    return [taken, probe]
      .map((sql) =>
        psql(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${sql}`, pgDb).trim()
      )
      .join('\n\n')
  }
  const sqlite = new Database(sqlitePath, { readonly: true })
  const out = [taken, probe]
    .map((sql) =>
      (sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[])
        .map((row) => row.detail)
        .join('\n')
    )
    .join('\n\n')
  sqlite.close()
  return out
}

async function main() {
  if (usePg) {
    psql(`DROP DATABASE IF EXISTS ${pgDb}`)
    psql(`CREATE DATABASE ${pgDb}`)
  }
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const env = {
    ...process.env,
    ...dbEnv,
    // BENCH_ROUTES is refused under NODE_ENV=production (start/env.ts). Development differs from
    // production only in error pages, asset caching and pretty log lines, none on this path.
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    RUN_JOBS: 'false',
    BENCH_ROUTES: 'true',
    HOST: '127.0.0.1',
    PORT: String(port),
    APP_URL: url,
    INITIAL_API_SECRET: SECRET,
  }
  const ace = (...args: string[]) => {
    const result = spawnSync(process.execPath, ['ace.js', ...args], {
      cwd: root,
      env,
      encoding: 'utf8',
    })
    if (result.status !== 0) throw new Error(`ace ${args.join(' ')}: ${result.stderr}`)
  }

  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []
  const server = spawn(
    process.execPath,
    [...nodeArgs, '--import=@poppinss/ts-exec', 'bin/server.ts'],
    {
      cwd: root,
      env,
      stdio: ['ignore', process.env.BENCH_LOG_LEVEL ? 'inherit' : 'ignore', 'inherit'],
    }
  )
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 })
  try {
    for (let attempt = 0; attempt < 300; attempt++) {
      try {
        const answer = await fetch(`${url}/payments/native/v1/config`)
        if (answer.ok) break
      } catch {}
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const dropped = dropIndexes()
    const addresses = Array.from({ length: WALLETS }, tronAddress)
    for (const address of addresses) ace('wallet:add', 'tron', address)
    ace('rate:set', 'USDT', 'CNY', '7.25')
    ace('settings:set', 'rate_limit.create_per_minute', '0')
    await new Promise((resolve) => setTimeout(resolve, 2500)) // settings and configuration refresh window

    const create = '/payments/native/v1/order/create-transaction'
    const lucidBody = () => JSON.stringify({ order_id: `l-${createSeq++}`, amount: '100.5' })
    console.log(
      `${usePg ? 'PostgreSQL' : 'SQLite'} · ${CONNECTIONS} connections · ${SECONDS} s per round · ${WALLETS} TRON wallets · ` +
        `node ${process.version} · ${cpus().length} CPUs (${cpus()[0]?.model.trim()}) · code: ${root}` +
        (dropped.length > 0 ? `\nindexes dropped before the rounds: ${dropped.join(', ')}` : '')
    )
    const lucidRoute = {
      name: 'bare route: one Lucid INSERT',
      path: '/__bench/lucid-insert',
      makeBody: lucidBody,
    }
    const rawRoute = {
      name: 'bare route: one raw INSERT',
      path: '/__bench/raw-insert',
      makeBody: lucidBody,
    }
    const createRoute = {
      name: 'create-transaction (distinct amounts)',
      path: create,
      makeBody: () => createBody('d'),
    }
    // Warm-up: JIT, the pool's connections, prepared statements, the cached configuration.
    await load(pool, [lucidRoute, rawRoute, createRoute], WARMUP)
    // PostgreSQL: fresh tables have no statistics until autovacuum analyzes them (within a
    // minute of their first rows, then as they grow); until then creates run ~4× slower
    // (measured: 398 vs 1,511 req/s). The rounds measure the steady state, so the bench does
    // what autovacuum would: ANALYZE after the warm-up's rows.
    if (usePg) psql('ANALYZE orders; ANALYZE amount_locks', pgDb)

    const [lucid, raw, created] = await load(pool, [lucidRoute, rawRoute, createRoute])
    const perCreate = (await statementsPer(pool, create, () => createBody('s'))) / 200
    const perLucid = (await statementsPer(pool, '/__bench/lucid-insert', lucidBody)) / 200

    // The same create priced by a live source instead of the fixed rate: a local CoinGecko-shaped
    // answer, asked by `rate:refresh` (the workers' job); the create reads the stored rate.
    const coingecko = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({
          tether: { cny: 7.25, usd: 1, last_updated_at: Math.floor(Date.now() / 1000) },
        })
      )
    })
    await new Promise<void>((resolve) => coingecko.listen(0, '127.0.0.1', resolve))
    ace(
      'settings:set',
      'rate.coingecko.url',
      `http://127.0.0.1:${(coingecko.address() as AddressInfo).port}`
    )
    ace('settings:set', 'rate.sources', 'coingecko')
    ace('rate:set', 'USDT', 'CNY', '~1.00')
    // Run without blocking this process: the CoinGecko stand-in answers from its event loop.
    // It exits 1 when a pair is refused: only USDT/CNY matters here.
    const refreshed = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      let stdout = ''
      let stderr = ''
      const child = spawn(process.execPath, ['ace.js', 'rate:refresh'], { cwd: root, env })
      child.stdout.on('data', (chunk) => (stdout += chunk))
      child.stderr.on('data', (chunk) => (stderr += chunk))
      child.once('exit', () => resolve({ stdout, stderr }))
    })
    const plain = stripVTControlCharacters(refreshed.stdout)
    if (!/USDT\W+CNY\W+7\.25\W+ok/.test(plain))
      throw new Error(`rate:refresh did not price USDT/CNY:\n${plain}${refreshed.stderr}`)
    await new Promise((resolve) => setTimeout(resolve, 2500)) // the configuration refresh window
    const [lucidLive, createdLive] = await load(pool, [
      { ...lucidRoute, name: 'bare route: one Lucid INSERT, live-rate round' },
      { ...createRoute, name: 'create-transaction, live rate (coingecko)' },
    ])
    coingecko.close()
    ace('rate:set', 'USDT', 'CNY', '7.25')
    ace('settings:set', 'rate.sources', '')
    await new Promise((resolve) => setTimeout(resolve, 2500))

    const seedStarted = performance.now()
    seedOpenOrders(addresses)
    const seedSeconds = (performance.now() - seedStarted) / 1000
    await load(pool, [createRoute], 2)
    // With the seeded orders, in turns with the bare route again (to tell the machine's noise from the orders' weight).
    const [lucidAgain, crowded] = await load(pool, [
      { ...lucidRoute, name: 'bare route: one Lucid INSERT, again' },
      { ...createRoute, name: `create-transaction, ${OPEN_ORDERS} more open orders` },
    ])

    const line = (round: Round) =>
      `${round.name.padEnd(48)} ${round.rps.toFixed(0).padStart(6)} req/s   p50 ${round.p50.toFixed(1).padStart(6)} ms   ` +
      `p99 ${round.p99.toFixed(1).padStart(6)} ms   failures ${round.failures}   loader CPU ${(round.loaderCpu * 100).toFixed(0)}% of a core`
    console.log(line(lucid))
    console.log(line(raw))
    console.log(line(created))
    console.log(line(lucidLive))
    console.log(line(createdLive))
    console.log(line(lucidAgain))
    console.log(line(crowded))
    console.log(
      `create ÷ bare Lucid INSERT                       ${(created.rps / lucid.rps).toFixed(2)}`
    )
    console.log(
      `create ÷ raw INSERT                              ${(created.rps / raw.rps).toFixed(2)}`
    )
    console.log(
      `create ÷ bare Lucid INSERT, live rate             ${(createdLive.rps / lucidLive.rps).toFixed(2)}  (fixed rate: ${(created.rps / lucid.rps).toFixed(2)})`
    )
    console.log(
      `create with ${OPEN_ORDERS} open orders ÷ with none     ${(crowded.rps / created.rps).toFixed(2)}  ` +
        `(each ÷ its bare route: ${(crowded.rps / lucidAgain.rps / (created.rps / lucid.rps)).toFixed(2)}; seeded in ${seedSeconds.toFixed(1)} s)`
    )
    console.log(
      `SQL statements per create                        ${perCreate.toFixed(2)}  (bare Lucid INSERT: ${perLucid.toFixed(2)}; sequential, BEGIN/COMMIT included)`
    )
    console.log(`plans with ${OPEN_ORDERS} open orders:\n${plans(addresses).replace(/^/gm, '  ')}`)
  } finally {
    await pool.close()
    server.kill('SIGTERM')
    await new Promise((resolve) => server.once('exit', resolve))
    rmSync(dir, { recursive: true, force: true })
    if (usePg) psql(`DROP DATABASE IF EXISTS ${pgDb}`)
  }
}

await main()
