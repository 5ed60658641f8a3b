/*
|--------------------------------------------------------------------------
| Benchmark: RPC requests per caught-up EVM scan, before and after
|--------------------------------------------------------------------------
|
|   npm run bench:scan-requests
|   BENCH_BASELINE_REF=446113d BENCH_SCANS=8 npm run bench:scan-requests
|
| The consistency checks of the EVM scan (every new block read, logs
| checked against the blocks' hashes and logsBloom) must not more than
| double what a caught-up scan asks. This runs the same scans, side by
| side in one run, with this tree and with an older commit
| (BENCH_BASELINE_REF, default 446113d: main before the chain-truth work):
| one anvil node and token pair, each version on its own SQLite file and
| receiving wallet, its own counting proxy; bench/scan_requests_driver.ts
| does the scanning in each tree (copied into the older one). Prints the
| median calls per scan by method, per scenario.
*/
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  createPublicClient,
  createWalletClient,
  getAddress,
  http,
  parseUnits,
  type Hex,
  type PublicClient,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { compileTestToken } from '#tests/helpers/evm/test_token'

const BASELINE = process.env.BENCH_BASELINE_REF ?? '446113d'
const SCANS = Number(process.env.BENCH_SCANS ?? 8)
/** Anvil's first default account (a well-known test key). */
const PAYER_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const root = new URL('../', import.meta.url).pathname

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

async function startAnvil(): Promise<{ url: string; process: ChildProcess; client: PublicClient }> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = spawn(
    join(root, 'node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil'),
    ['--host', '127.0.0.1', '--port', String(port), '--silent'],
    {
      stdio: 'ignore',
    }
  )
  const client = createPublicClient({ transport: http(url) }) as PublicClient
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      await client.getBlockNumber()
      return { url, process: child, client }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error('anvil did not start')
}

async function deployToken(url: string, client: PublicClient, symbol: string): Promise<string> {
  const { abi, bytecode } = compileTestToken()
  const account = privateKeyToAccount(PAYER_KEY)
  const wallet = createWalletClient({ account, transport: http(url) })
  const hash = await wallet.deployContract({
    abi,
    bytecode,
    args: [`Test ${symbol}`, symbol, 6, parseUnits('1000000', 6)],
    account,
    chain: null,
  })
  const receipt = await client.waitForTransactionReceipt({ hash })
  return getAddress(receipt.contractAddress!)
}

/** A copy of the gateway at `ref` (git worktree), sharing this tree's node_modules, with the driver copied in. */
function baselineTree(ref: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'scan-requests-'))
  const tree = join(dir, 'tree')
  const added = spawnSync('git', ['worktree', 'add', '--detach', tree, ref], {
    cwd: root,
    encoding: 'utf8',
  })
  if (added.status !== 0) throw new Error(`git worktree add ${ref}: ${added.stderr}`)
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'))
  cpSync(join(root, 'bench/scan_requests_driver.ts'), join(tree, 'bench/scan_requests_driver.ts'))
  return tree
}

function runDriver(
  tree: string,
  env: Record<string, string>
): { scenario: string; scans: Record<string, number>[] }[] {
  const result = spawnSync(
    process.execPath,
    ['--import=@poppinss/ts-exec', 'bench/scan_requests_driver.ts'],
    {
      cwd: tree,
      encoding: 'utf8',
      env: {
        ...process.env,
        NODE_ENV: 'development',
        LOG_LEVEL: 'silent',
        DB_CONNECTION: 'sqlite',
        RUN_JOBS: 'false',
        ...env,
      },
      timeout: 20 * 60_000,
    }
  )
  const line = result.stdout.split('\n').find((entry) => entry.startsWith('BENCH_RESULT '))
  if (!line)
    throw new Error(`the driver in ${tree} printed no result:\n${result.stdout}\n${result.stderr}`)
  return JSON.parse(line.slice('BENCH_RESULT '.length))
}

function median(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

function summary(scans: Record<string, number>[]) {
  const methods = new Set(scans.flatMap((scan) => Object.keys(scan)))
  const byMethod: Record<string, number> = {}
  for (const method of methods) byMethod[method] = median(scans.map((scan) => scan[method] ?? 0))
  const total = median(
    scans.map((scan) => Object.values(scan).reduce((sum, count) => sum + count, 0))
  )
  return { total, byMethod }
}

async function main() {
  const anvil = await startAnvil()
  const usdt = await deployToken(anvil.url, anvil.client, 'USDT')
  const usdc = await deployToken(anvil.url, anvil.client, 'USDC')
  const tree = baselineTree(BASELINE)
  const scratch = mkdtempSync(join(tmpdir(), 'scan-requests-db-'))
  try {
    const common = {
      BENCH_ANVIL: anvil.url,
      BENCH_USDT: usdt,
      BENCH_USDC: usdc,
      BENCH_SCANS: String(SCANS),
    }
    const before = runDriver(tree, {
      ...common,
      SQLITE_PATH: join(scratch, 'before.sqlite3'),
      BENCH_WALLET: privateKeyToAccount(generatePrivateKey()).address,
    })
    const after = runDriver(root, {
      ...common,
      SQLITE_PATH: join(scratch, 'after.sqlite3'),
      BENCH_WALLET: privateKeyToAccount(generatePrivateKey()).address,
    })
    console.log(
      `RPC calls per caught-up scan (median of ${SCANS}); before: ${BASELINE}, after: this tree`
    )
    for (const [index, scenario] of before.entries()) {
      const was = summary(scenario.scans)
      const now = summary(after[index].scans)
      console.log(`\n${scenario.scenario}`)
      console.log(`  ${'method'.padEnd(28)} ${'before'.padStart(7)} ${'after'.padStart(7)}`)
      for (const method of [
        ...new Set([...Object.keys(was.byMethod), ...Object.keys(now.byMethod)]),
      ].sort()) {
        console.log(
          `  ${method.padEnd(28)} ${String(was.byMethod[method] ?? 0).padStart(7)} ${String(now.byMethod[method] ?? 0).padStart(7)}`
        )
      }
      const ratio = was.total > 0 ? (now.total / was.total).toFixed(2) : 'n/a'
      console.log(
        `  ${'total'.padEnd(28)} ${String(was.total).padStart(7)} ${String(now.total).padStart(7)}   after ÷ before ${ratio}`
      )
    }
  } finally {
    anvil.process.kill('SIGKILL')
    spawnSync('git', ['worktree', 'remove', '--force', tree], { cwd: root })
    rmSync(scratch, { recursive: true, force: true })
    if (existsSync(tree)) rmSync(tree, { recursive: true, force: true })
  }
}

await main()
