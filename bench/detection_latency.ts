/*
|--------------------------------------------------------------------------
| Benchmark: payment → merchant callback after the confirming block
|--------------------------------------------------------------------------
|
|   npm run bench:detection
|   BENCH_ORDERS=20 BENCH_BEFORE_ORDERS=10 BENCH_BEFORE_INTERVAL=15 npm run bench:detection
|   BENCH_BEFORE_ORDERS=0 npm run bench:detection     # skip the slow "before" mode
|
| A real EVM node (anvil, HTTP and WebSocket on one port) with a test
| USDT contract, and the real gateway (bin/server.ts, background jobs on)
| on a fresh SQLite database per mode, calling back a local merchant
| server. For each order: create it over HTTP, pay it, mine up to one block
| short of its confirmations, wait a random moment, mine the confirming
| block, and time from just before that block is mined to
|   - the order marked paid in the database (its updated_at: scan →
|     matcher → paid; paid_at is the transfer's block time), and
|   - the merchant receiving the signed callback.
| Modes, side by side:
|   ws       chain:set --ws (eth_subscribe newHeads), scan interval 60 s
|   poll     no WebSocket, polled at the block time (1 s)
|   before   no WebSocket, scan interval 15 s (the seeded Ethereum interval
|            before issue 11: what main's scheduler did)
*/
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer as createHttpServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  createPublicClient,
  createWalletClient,
  getAddress,
  http,
  parseUnits,
  type Abi,
  type Hex,
  type PublicClient,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { compileTestToken } from '#tests/helpers/evm/test_token'

const ORDERS = Number(process.env.BENCH_ORDERS ?? 20)
const BEFORE_ORDERS = Number(process.env.BENCH_BEFORE_ORDERS ?? 10)
const BEFORE_INTERVAL = Number(process.env.BENCH_BEFORE_INTERVAL ?? 15)
const CONFIRMATIONS = 3
const SECRET = 'bench-secret-0123456789abcdef'
/** Anvil's first default account (a well-known test key). */
const PAYER_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const root = new URL('../', import.meta.url).pathname
const require = createRequire(import.meta.url)
/** The gateway's own SQLite driver, read-only here (paid_at of each order). */
const Database = require('better-sqlite3') as new (
  path: string,
  options: { readonly: boolean; fileMustExist: boolean }
) => { prepare(sql: string): { get(...params: unknown[]): unknown }; close(): void }

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function percentile(sorted: number[], p: number) {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

function sign(params: Record<string, string | number>) {
  const message = Object.keys(params)
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&')
  return createHmac('sha256', SECRET).update(message).digest('hex')
}

/** The merchant: answers "success" and notes when each trade's callback arrived. */
function startMerchant(): Promise<{ url: string; server: Server; arrivals: Map<string, number> }> {
  const arrivals = new Map<string, number>()
  const server = createHttpServer((request, response) => {
    const at = Date.now()
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      try {
        const tradeId = JSON.parse(body).trade_id as string
        if (!arrivals.has(tradeId)) arrivals.set(tradeId, at)
      } catch {}
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.end('success')
    })
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      resolve({ url: `http://127.0.0.1:${port}/notify`, server, arrivals })
    })
  )
}

type Mode = { name: string; orders: number; chainArgs: string[]; maxPauseMs: number }

type Figures = { paid: number[]; callback: number[]; missing: number }

async function runMode(
  mode: Mode,
  node: { rpcUrl: string; wsUrl: string; client: PublicClient; token: `0x${string}`; abi: Abi },
  merchant: { url: string; arrivals: Map<string, number> }
): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-detect-'))
  const sqlite = join(dir, 'bench.sqlite3')
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const env = {
    ...process.env,
    DB_CONNECTION: 'sqlite',
    SQLITE_PATH: sqlite,
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    RUN_JOBS: 'true',
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
    if (result.status !== 0)
      throw new Error(`ace ${args.join(' ')}: ${result.stderr}${result.stdout}`)
  }
  const wallet = getAddress(privateKeyToAccount(generatePrivateKey()).address)
  let server: ChildProcess | null = null
  const figures: Figures = { paid: [], callback: [], missing: 0 }
  try {
    // The server migrates and seeds the fresh database, then the chain is
    // configured through ace (the watch follows within a second; nothing is
    // scanned before a wallet is added, after the RPC URL).
    server = spawn(process.execPath, ['--import=@poppinss/ts-exec', 'bin/server.ts'], {
      cwd: root,
      env,
      stdio: ['ignore', process.env.BENCH_LOG_LEVEL ? 'inherit' : 'ignore', 'inherit'],
    })
    for (let attempt = 0; attempt < 300; attempt++) {
      try {
        const answer = await fetch(`${url}/payments/native/v1/config`)
        if (answer.ok) break
      } catch {}
      await sleep(100)
    }
    ace(
      'chain:set',
      'ethereum',
      '--rpc',
      node.rpcUrl,
      '--confirmations',
      String(CONFIRMATIONS),
      ...mode.chainArgs
    )
    ace(
      'token:set',
      'ethereum',
      'USDT',
      '--contract',
      node.token,
      '--decimals',
      '6',
      '--precision',
      '2'
    )
    ace('wallet:add', 'ethereum', wallet)
    ace('rate:set', 'USDT', 'CNY', '7.25')
    ace('settings:set', 'rate_limit.create_per_minute', '0')
    ace('settings:set', 'callbacks.allow_private_targets', 'true')
    const db = new Database(sqlite, { readonly: true, fileMustExist: true })
    const payer = createWalletClient({
      account: privateKeyToAccount(PAYER_KEY),
      transport: http(node.rpcUrl),
    })
    // Settings are re-read within 2 s; the watch makes its first scan (the cursor).
    await sleep(2500)

    for (let index = 0; index < mode.orders; index++) {
      const params: Record<string, string | number> = {
        pid: '1000',
        order_id: `${mode.name}-${index}-${Date.now()}`,
        currency: 'cny',
        amount: 100 + index,
        token: 'usdt',
        network: 'ethereum',
        notify_url: merchant.url,
      }
      const createResponse = await fetch(`${url}/payments/native/v1/order/create-transaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...params, signature: sign(params) }),
      })
      const created = (await createResponse.json()) as {
        status_code: number
        data: { trade_id: string; actual_amount: number; receive_address: string }
      }
      if (created.status_code !== 200) throw new Error(`create failed: ${JSON.stringify(created)}`)
      const { trade_id: tradeId, actual_amount: amount, receive_address: to } = created.data

      const hash = await payer.writeContract({
        address: node.token,
        abi: node.abi,
        functionName: 'transfer',
        args: [to, parseUnits(String(amount), 6)],
        chain: null,
      })
      await node.client.waitForTransactionReceipt({ hash }) // 1 confirmation
      if (CONFIRMATIONS > 2)
        await node.client.request({
          method: 'anvil_mine' as any,
          params: [`0x${(CONFIRMATIONS - 2).toString(16)}`] as any,
        })
      // The confirming block comes at a random moment relative to the gateway's polls.
      await sleep(Math.random() * mode.maxPauseMs)
      const minedAt = Date.now()
      await node.client.request({ method: 'anvil_mine' as any, params: ['0x1'] as any })

      const deadline = Date.now() + Math.max(30_000, mode.maxPauseMs * 3)
      let paidAt: number | null = null
      while (Date.now() < deadline) {
        if (paidAt === null) {
          // paid_at is the transfer's block time: the moment it was marked paid is the row's updated_at.
          const row = db
            .prepare('select status, updated_at from orders where trade_id = ?')
            .get(tradeId) as { status: number; updated_at: number } | undefined
          if (row?.status === 2) paidAt = Number(row.updated_at)
        }
        if (paidAt !== null && merchant.arrivals.has(tradeId)) break
        await sleep(10)
      }
      if (paidAt === null || !merchant.arrivals.has(tradeId)) {
        figures.missing++
        continue
      }
      figures.paid.push(paidAt - minedAt)
      figures.callback.push(merchant.arrivals.get(tradeId)! - minedAt)
      process.stderr.write(`\r${mode.name}: ${index + 1}/${mode.orders}   `)
    }
    process.stderr.write('\n')
    db.close()
  } finally {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM')
      await new Promise((resolve) => server!.once('exit', resolve))
    }
    rmSync(dir, { recursive: true, force: true })
  }
  return figures
}

async function main() {
  const port = await freePort()
  const anvil = spawn(
    join(root, 'node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil'),
    ['--host', '127.0.0.1', '--port', String(port), '--chain-id', '1', '--silent'],
    { stdio: 'ignore' }
  )
  const rpcUrl = `http://127.0.0.1:${port}`
  const wsUrl = `ws://127.0.0.1:${port}`
  const client = createPublicClient({ cacheTime: 0, transport: http(rpcUrl) }) as PublicClient
  const merchant = await startMerchant()
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        await client.getBlockNumber()
        break
      } catch {
        await sleep(100)
      }
    }
    const { abi, bytecode } = compileTestToken()
    const deployer = createWalletClient({
      account: privateKeyToAccount(PAYER_KEY),
      transport: http(rpcUrl),
    })
    const deployHash = await deployer.deployContract({
      abi,
      bytecode,
      args: ['Test USDT', 'USDT', 6, parseUnits('1000000', 6)],
      chain: null,
    })
    const deployReceipt = await client.waitForTransactionReceipt({ hash: deployHash })
    const token = getAddress(deployReceipt.contractAddress!)
    const node = { rpcUrl, wsUrl, client, token, abi }

    const modes: Mode[] = [
      {
        name: 'ws',
        orders: ORDERS,
        chainArgs: ['--ws', wsUrl, '--scan-interval', '60', '--block-time', '1'],
        maxPauseMs: 1000,
      },
      {
        name: 'poll',
        orders: ORDERS,
        chainArgs: ['--scan-interval', '1', '--block-time', '1'],
        maxPauseMs: 1000,
      },
    ]
    if (BEFORE_ORDERS > 0) {
      modes.push({
        name: `before (${BEFORE_INTERVAL} s)`,
        orders: BEFORE_ORDERS,
        chainArgs: ['--scan-interval', String(BEFORE_INTERVAL), '--block-time', '12'],
        maxPauseMs: BEFORE_INTERVAL * 1000,
      })
    }
    const results: [Mode, Figures][] = []
    for (const mode of modes) results.push([mode, await runMode(mode, node, merchant)])

    console.log(
      `\ndetection latency on anvil (${CONFIRMATIONS} confirmations, SQLite, jobs on), node ${process.version}; ` +
        'ms from mining the confirming block'
    )
    console.log(
      `${'mode'.padEnd(16)}${'orders'.padStart(7)}   ${'→ paid p50'.padStart(11)} ${'p95'.padStart(7)}   ${'→ callback p50'.padStart(15)} ${'p95'.padStart(7)}   missing`
    )
    for (const [mode, figures] of results) {
      const paid = [...figures.paid].sort((a, b) => a - b)
      const callback = [...figures.callback].sort((a, b) => a - b)
      const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(0)).padStart(7)
      console.log(
        `${mode.name.padEnd(16)}${String(paid.length).padStart(7)}   ${ms(percentile(paid, 50)).padStart(11)} ${ms(percentile(paid, 95))}   ` +
          `${ms(percentile(callback, 50)).padStart(15)} ${ms(percentile(callback, 95))}   ${figures.missing}`
      )
    }
  } finally {
    merchant.server.close()
    anvil.kill('SIGKILL')
  }
}

await main()
