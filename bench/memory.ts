/*
|--------------------------------------------------------------------------
| Benchmark: the server's memory next to a bare AdonisJS 7 app
|--------------------------------------------------------------------------
|
|   npm run bench:memory                     # SQLite (temporary file)
|   DB_CONNECTION=pg npm run bench:memory    # PostgreSQL (database memory_bench, dropped after)
|
| Compiles the gateway (`npm run build`'s way, into a temporary directory) and the
| bare app of bench/bare_app (the API starter's providers, no database, the
| same three paths answered from memory), starts both as production servers
| (`node bin/server.js`, NODE_ENV=production; the gateway as a web process:
| RUN_JOBS=false, on a fresh database with BENCH_WALLETS TRON wallets and a
| rate), and prints side by side their resident memory (VmRSS):
|
|   - idle: once started and each path asked once, when RSS has settled;
|   - after BENCH_REQUESTS (40,000) requests: public config, cashier status
|     and signed order creation in turn, BENCH_CONNECTIONS (16) in flight;
|   - after as many again, and the growth over that second batch;
|   - then, after the second batch, that RSS split into anonymous pages
|     (heaps, the C allocator) and mapped files (code): RssAnon and RssFile.
|
| Each pair runs with V8's defaults, then with the Node flags of
| BENCH_NODE_FLAGS (default `--optimize-for-size`, as docs/production.md
| runs a web process), and the requests per second of each run are printed
| next to its memory. Also the gateway run from its TypeScript sources
| (ts-exec, `npm start`'s way) with BENCH_SOURCES=1; heap snapshots with
| BENCH_HEAP_SNAPSHOTS=<dir>. Both builds use this checkout's node_modules.
*/
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs'
import { tmpdir, cpus } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { freePort, nativeSign, tronAddress } from './bench_support.js'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 40_000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16)
const WALLETS = Number(process.env.BENCH_WALLETS ?? 10)
/**
 * Each app runs with V8's defaults, then with each set of Node flags of
 * BENCH_NODE_FLAGS (sets separated by `|`; default `--optimize-for-size`, as
 * docs/production.md runs a web process; empty: the defaults only).
 */
const FLAG_SETS = [
  { label: '', args: [] as string[] },
  ...(process.env.BENCH_NODE_FLAGS ?? '--optimize-for-size')
    .split('|')
    .map((set) => set.trim())
    .filter(Boolean)
    .map((set) => ({ label: `, ${set}`, args: set.split(/\s+/) })),
]
const SECRET = 'bench-secret-0123456789abcdef'
const APP_KEY = randomBytes(32).toString('base64url')
const root = new URL('../', import.meta.url).pathname
const usePg = process.env.DB_CONNECTION === 'pg'
const pgDb = process.env.BENCH_PG_DB_NAME ?? 'memory_bench'
const scratch = mkdtempSync(join(tmpdir(), 'gateway-memory-'))

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8' })
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}): ${result.stderr || result.stdout}`)
  return result.stdout
}

function psql(sql: string) {
  run(
    'psql',
    [
      '-h',
      process.env.PG_HOST ?? '127.0.0.1',
      '-U',
      process.env.PG_USER ?? 'postgres',
      '-d',
      'postgres',
      '-X',
      '-q',
      '-c',
      sql,
    ],
    root
  )
}

/**
 * `node ace build` of an app into `outDir`: the build is made in the app's
 * own build/ (the assembler's fixed place) of a copy, so that a build/ of
 * the checkout is left alone; node_modules is this checkout's.
 */
function build(appRoot: string, name: string, args: string[] = []): string {
  const copy = join(scratch, `${name}-src`)
  const from = appRoot.replace(/\/+$/, '')
  cpSync(from, copy, {
    recursive: true,
    filter: (source) =>
      !/^\/(node_modules|build|storage|tmp|\.git|coverage)(\/|$)|\/bare_app\/build(\/|$)/.test(
        source.slice(from.length)
      ),
  })
  if (!existsSync(join(copy, 'node_modules')))
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'))
  run(process.execPath, ['ace.js', 'build', ...args], copy)
  const output = join(copy, 'build')
  if (!existsSync(join(output, 'node_modules')))
    symlinkSync(join(root, 'node_modules'), join(output, 'node_modules'))
  return output
}

/** A line of /proc/<pid>/status, in kB. */
function statusKb(pid: number, field: 'VmRSS' | 'RssAnon' | 'RssFile'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(
    readFileSync(`/proc/${pid}/status`, 'utf8')
  )
  return match ? Number(match[1]) : Number.NaN
}
const rssKb = (pid: number) => statusKb(pid, 'VmRSS')

const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** RSS once it holds still: three readings 500 ms apart within 1 % (at most 10 s). */
async function settledRss(pid: number): Promise<number> {
  let readings: number[] = []
  for (let attempt = 0; attempt < 20; attempt++) {
    readings = [...readings, rssKb(pid)].slice(-3)
    if (
      readings.length === 3 &&
      Math.max(...readings) - Math.min(...readings) <= Math.max(...readings) * 0.01
    )
      break
    await sleep(500)
  }
  return readings[readings.length - 1]
}

const sign = (params: Record<string, string | number>) => nativeSign(params, SECRET)

let sequence = 0
function createBody(): string {
  const index = sequence++
  const params: Record<string, string | number> = {
    pid: '1000',
    order_id: `m-${index}`,
    currency: 'cny',
    amount: 100 + index,
    token: 'usdt',
    network: 'tron',
    notify_url: 'https://shop.example/notify',
  }
  return JSON.stringify({ ...params, signature: sign(params) })
}

type Server = { name: string; url: string; process: ChildProcess; tradeId: string }

async function waitFor(url: string, child: ChildProcess, output: () => string) {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null)
      throw new Error(`the server exited (${child.exitCode}):\n${output()}`)
    try {
      const answer = await fetch(url)
      if (answer.ok) return
    } catch {}
    await sleep(100)
  }
  throw new Error(`no answer from ${url} within 60 s:\n${output()}`)
}

async function start(
  name: string,
  cwd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  prepare?: () => void
): Promise<Server> {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => (output = (output + chunk).slice(-4000)))
  child.stderr!.on('data', (chunk) => (output = (output + chunk).slice(-4000)))
  const url = `http://127.0.0.1:${env.PORT}`
  await waitFor(`${url}/payments/native/v1/config`, child, () => output)
  await prepare?.()
  // The first order (its trade_id is the status path's), once the server has read the set-up.
  for (let attempt = 0; ; attempt++) {
    const createResponse = await fetch(`${url}/payments/native/v1/order/create-transaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: createBody(),
    })
    const created = (await createResponse.json()) as { data?: { trade_id?: string } }
    const tradeId = created.data?.trade_id
    if (tradeId) return { name, url, process: child, tradeId }
    if (attempt === 100)
      throw new Error(`${name}: the first create failed: ${JSON.stringify(created)}\n${output}`)
    await sleep(100)
  }
}

async function gatewayEnv(): Promise<NodeJS.ProcessEnv> {
  const port = await freePort()
  const dbEnv = usePg
    ? { DB_CONNECTION: 'pg', PG_DB_NAME: pgDb }
    : { DB_CONNECTION: 'sqlite', SQLITE_PATH: join(scratch, `gateway-${port}.sqlite3`) }
  if (usePg) {
    psql(`DROP DATABASE IF EXISTS ${pgDb}`)
    psql(`CREATE DATABASE ${pgDb}`)
  }
  return {
    ...process.env,
    ...dbEnv,
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    RUN_JOBS: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    APP_URL: `http://127.0.0.1:${port}`,
    APP_KEY,
    INITIAL_API_SECRET: SECRET,
  }
}

/** Wallets, a rate and no create limit, with the gateway's own commands (the server picks them up). */
function install(appRoot: string, aceFile: string, env: NodeJS.ProcessEnv) {
  for (let index = 0; index < WALLETS; index++)
    run(process.execPath, [aceFile, 'wallet:add', 'tron', tronAddress()], appRoot, env)
  run(process.execPath, [aceFile, 'rate:set', 'USDT', 'CNY', '7.25'], appRoot, env)
  run(
    process.execPath,
    [aceFile, 'settings:set', 'rate_limit.create_per_minute', '0'],
    appRoot,
    env
  )
  run(
    process.execPath,
    [aceFile, 'settings:set', 'rate_limit.cashier_per_minute', '0'],
    appRoot,
    env
  )
}

/** `count` requests, config, status and create in turn, CONNECTIONS in flight. */
async function load(server: Server, count: number): Promise<number> {
  const pool = new Pool(server.url, {
    connections: CONNECTIONS,
    pipelining: 1,
    keepAliveTimeout: 60_000,
  })
  let next = 0
  let failures = 0
  const worker = async () => {
    while (next < count) {
      const index = next++
      const kind = index % 3
      const response =
        kind === 0
          ? await pool.request({ method: 'GET', path: '/payments/native/v1/config' })
          : kind === 1
            ? await pool.request({ method: 'GET', path: `/pay/check-status/${server.tradeId}` })
            : await pool.request({
                method: 'POST',
                path: '/payments/native/v1/order/create-transaction',
                headers: { 'content-type': 'application/json' },
                body: createBody(),
              })
      await response.body.dump()
      if (response.statusCode !== 200) failures++
    }
  }
  await Promise.all(Array.from({ length: CONNECTIONS }, worker))
  await pool.close()
  return failures
}

type Figures = {
  name: string
  idle: number
  first: number
  second: number
  failures: number
  /** Requests per second over both batches. */
  rate: number
  /** After the second batch: the anonymous memory (heaps, the allocator) and the mapped files (code) of the RSS. */
  anon: number
  file: number
}

/**
 * BENCH_HEAP_SNAPSHOTS=<dir>: the gateway also writes a heap snapshot after
 * each reading (idle, after one batch, after two), into <dir>, to find what
 * grows (compare them in Chrome's DevTools, Memory tab, "Comparison"). A
 * snapshot costs the process memory of its own: the readings after the first
 * snapshot are then higher than without.
 */
const snapshotDir = process.env.BENCH_HEAP_SNAPSHOTS
async function heapSnapshot(server: Server, cwd: string, label: string) {
  if (!snapshotDir || server.name.startsWith('bare')) return
  const before = new Set(readdirSync(cwd))
  server.process.kill('SIGUSR2')
  for (let waited = 0; waited < 120_000; waited += 500) {
    await sleep(500)
    const file = readdirSync(cwd).find(
      (name) => name.endsWith('.heapsnapshot') && !before.has(name)
    )
    // Written whole once the process answers again.
    if (file && (await fetch(`${server.url}/health/live`).catch(() => null))) {
      mkdirSync(snapshotDir, { recursive: true })
      renameSync(join(cwd, file), join(snapshotDir, `${label}.heapsnapshot`))
      return
    }
  }
  throw new Error(`no heap snapshot from ${server.name} within 120 s`)
}

async function measure(server: Server, cwd: string): Promise<Figures> {
  const pid = server.process.pid!
  const idle = await settledRss(pid)
  const label = server.name.replace(/[^a-z0-9=-]+/gi, '-')
  await heapSnapshot(server, cwd, `${label}-idle`)
  let started = performance.now()
  let failures = await load(server, REQUESTS)
  let loadMs = performance.now() - started
  const first = await settledRss(pid)
  await heapSnapshot(server, cwd, `${label}-after-${REQUESTS}`)
  started = performance.now()
  failures += await load(server, REQUESTS)
  loadMs += performance.now() - started
  const second = await settledRss(pid)
  const anon = statusKb(pid, 'RssAnon')
  const file = statusKb(pid, 'RssFile')
  await heapSnapshot(server, cwd, `${label}-after-${2 * REQUESTS}`)
  const rate = (2 * REQUESTS) / (loadMs / 1000)
  return { name: server.name, idle, first, second, failures, rate, anon, file }
}

async function stop(server: Server) {
  const exited = new Promise((resolve) => server.process.once('exit', resolve))
  server.process.kill('SIGTERM')
  await Promise.race([exited, sleep(15_000)])
  if (server.process.exitCode === null) server.process.kill('SIGKILL')
}

async function main() {
  console.log(
    `${usePg ? 'PostgreSQL' : 'SQLite'} · ${REQUESTS} requests per batch (config, status, create in turn) · ` +
      `${CONNECTIONS} connections · node ${process.version} · ${cpus().length} CPUs`
  )
  const bareBuild = build(join(root, 'bench/bare_app'), 'bare')
  // As `npm run build` makes it (no tests or benchmarks in build/).
  const gatewayBuild = build(root, 'gateway', ['--tsconfig', 'tsconfig.build.json'])
  const results: Figures[] = []

  for (const flags of FLAG_SETS) {
    const bareEnv = {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      APP_KEY,
      LOG_LEVEL: 'warn',
    }
    const bare = await start(
      `bare AdonisJS 7 app${flags.label}`,
      bareBuild,
      [...flags.args, 'bin/server.js'],
      bareEnv
    )
    try {
      results.push(await measure(bare, bareBuild))
    } finally {
      await stop(bare)
    }

    const targets: { name: string; cwd: string; args: string[]; ace: string }[] = [
      { name: `gateway${flags.label}`, cwd: gatewayBuild, args: ['bin/server.js'], ace: 'ace.js' },
    ]
    if (process.env.BENCH_SOURCES === '1') {
      targets.push({
        name: `gateway, sources (ts-exec)${flags.label}`,
        cwd: root,
        args: ['--import=@poppinss/ts-exec', 'bin/server.ts'],
        ace: 'ace.js',
      })
    }
    for (const target of targets) {
      const env = await gatewayEnv()
      const args = [
        ...(snapshotDir ? ['--heapsnapshot-signal=SIGUSR2'] : []),
        ...flags.args,
        ...target.args,
      ]
      // The server's first start migrates and installs the defaults; then the wallets and the rate.
      const server = await start(target.name, target.cwd, args, env, () =>
        install(target.cwd, target.ace, env)
      )
      try {
        results.push(await measure(server, target.cwd))
      } finally {
        await stop(server)
      }
    }
  }

  const pad = (text: string, width: number) => text.padEnd(width)
  const width = Math.max(...results.map((figures) => figures.name.length)) + 2
  console.log(
    `\n${pad('server (compiled unless said)', width)}${pad('idle', 9)}${pad(`after ${REQUESTS}`, 13)}` +
      `${pad(`after ${2 * REQUESTS}`, 13)}${pad('growth 2nd', 12)}${pad('requests/s', 12)}× bare (idle / after ${REQUESTS} / after ${2 * REQUESTS})`
  )
  let base = results[0]
  for (const figures of results) {
    if (figures.name.startsWith('bare')) base = figures
    const growth = ((figures.second - figures.first) / figures.first) * 100
    console.log(
      pad(figures.name, width) +
        pad(mb(figures.idle), 9) +
        pad(mb(figures.first), 13) +
        pad(mb(figures.second), 13) +
        pad(`${growth >= 0 ? '+' : ''}${growth.toFixed(1)} %`, 12) +
        pad(figures.rate.toFixed(0), 12) +
        `${(figures.idle / base.idle).toFixed(2)} / ${(figures.first / base.first).toFixed(2)} / ${(figures.second / base.second).toFixed(2)}` +
        (figures.failures > 0 ? `   (${figures.failures} answers not 200)` : '')
    )
  }
  // Where the resident memory after the second batch is: anonymous pages (V8's heaps, the
  // allocator's, threads' stacks) against mapped files (node's code, native addons).
  console.log(`\n${pad(`after ${2 * REQUESTS}`, width)}${pad('anonymous', 12)}files`)
  for (const figures of results)
    console.log(pad(figures.name, width) + pad(mb(figures.anon), 12) + mb(figures.file))
}

main()
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => {
    rmSync(scratch, { recursive: true, force: true })
    if (usePg) {
      try {
        psql(`DROP DATABASE IF EXISTS ${pgDb}`)
      } catch {}
    }
  })
