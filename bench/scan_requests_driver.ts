/*
|--------------------------------------------------------------------------
| Driver of bench/scan_requests.ts (not run alone)
|--------------------------------------------------------------------------
|
| Runs in one gateway tree (this one, or a copy of an older commit made by
| bench/scan_requests.ts): boots the app on its own SQLite file, points the
| seeded `ethereum` network at a counting JSON-RPC proxy in front of the
| anvil node the parent started, and, scenario by scenario, mines and scans
| as a caught-up gateway does (one scanner process, in-memory state kept
| between runs). Prints one JSON line: the calls of every scan, by method.
| Uses only what every version of the gateway has (the operator services,
| the chain scanner, the tests' RpcProxy).
|
| Env: BENCH_ANVIL (node URL), BENCH_USDT, BENCH_USDC (token contracts),
| BENCH_WALLET, SQLITE_PATH (fresh file), BENCH_SCANS (scans per scenario).
*/
import 'reflect-metadata'
import { Ignitor } from '@adonisjs/core'

const APP_ROOT = new URL('../', import.meta.url)
const IMPORTER = (filePath: string) => {
  if (filePath.startsWith('./') || filePath.startsWith('../'))
    return import(new URL(filePath, APP_ROOT).href)
  return import(filePath)
}

const ANVIL = process.env.BENCH_ANVIL!
const SCANS = Number(process.env.BENCH_SCANS ?? 8)

type Scenario = { name: string; native: boolean; blocksPerScan: number; confirmations: number }
const SCENARIOS: Scenario[] = [
  {
    name: 'USDT+USDC+ETH, 3 confirmations, 1 new block a scan',
    native: true,
    blocksPerScan: 1,
    confirmations: 3,
  },
  {
    name: 'USDT+USDC only, 3 confirmations, 1 new block a scan',
    native: false,
    blocksPerScan: 1,
    confirmations: 3,
  },
  {
    name: 'USDT+USDC+ETH, 1 confirmation, 5 new blocks a scan',
    native: true,
    blocksPerScan: 5,
    confirmations: 1,
  },
]

async function rpc(method: string, params: unknown[] = []) {
  const response = await fetch(ANVIL, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  return ((await response.json()) as { result: unknown }).result
}

type ChainService = {
  set(network: string, changes: Record<string, unknown>): Promise<unknown>
  setToken(network: string, symbol: string, changes: Record<string, unknown>): Promise<unknown>
}
type WalletService = { add(network: string, address: string): Promise<unknown> }

/**
 * The chain and wallet services: module singletons today; a tree from before
 * 2026-11-27 (the baseline) reached them through its operator_service facade.
 */
async function operatorServices(): Promise<{
  chainAdmin: ChainService
  walletAdmin: WalletService
}> {
  const chains: { default?: ChainService } = await import('#services/operators/chain_admin')
  const wallets: { default?: WalletService } = await import('#services/operators/wallet_admin')
  if (chains.default && wallets.default)
    return { chainAdmin: chains.default, walletAdmin: wallets.default }
  const facade = '#services/operator_service'
  const { default: operator } = await import(facade)
  return {
    chainAdmin: {
      set: (network, changes) => operator.setChain(network, changes),
      setToken: (network, symbol, changes) => operator.setToken(network, symbol, changes),
    },
    walletAdmin: { add: (network, address) => operator.addWallet(network, address) },
  }
}

async function main() {
  const app = new Ignitor(APP_ROOT, { importer: IMPORTER }).createApp('console')
  app.booting(async () => {
    await import('#start/env')
  })
  await app.init()
  await app.boot()
  await app.start(() => {})
  try {
    const { default: installation } = await import('#services/installation_service')
    const { chainAdmin, walletAdmin } = await operatorServices()
    const { default: chainScanner } = await import('#services/chain_scanner')
    const { RpcProxy } = await import('#tests/helpers/evm/rpc_proxy')
    await installation.migrate()
    await installation.installDefaults(() => {})
    const proxy = await new RpcProxy(ANVIL).start()

    await chainAdmin.set('ethereum', { rpcUrls: [proxy.url], confirmations: 3, enabled: true })
    await chainAdmin.setToken('ethereum', 'USDT', {
      contract: process.env.BENCH_USDT!,
      decimals: 6,
      precision: 2,
    })
    await chainAdmin.setToken('ethereum', 'USDC', {
      contract: process.env.BENCH_USDC!,
      decimals: 6,
      precision: 2,
    })
    await walletAdmin.add('ethereum', process.env.BENCH_WALLET!)

    const results: { scenario: string; scans: Record<string, number>[] }[] = []
    for (const scenario of SCENARIOS) {
      await chainAdmin.set('ethereum', { confirmations: scenario.confirmations })
      await chainAdmin.setToken('ethereum', 'ETH', { enabled: scenario.native })
      // Caught up first (and the in-memory windows warm), then measured.
      for (let warm = 0; warm < 2; warm++) {
        await rpc('anvil_mine', [`0x${scenario.blocksPerScan.toString(16)}`])
        await chainScanner.scan({ network: 'ethereum' })
      }
      const scans: Record<string, number>[] = []
      for (let run = 0; run < SCANS; run++) {
        await rpc('anvil_mine', [`0x${scenario.blocksPerScan.toString(16)}`])
        proxy.reset()
        const [report] = await chainScanner.scan({ network: 'ethereum' })
        if (report.detail.startsWith('scan failed')) throw new Error(report.detail)
        scans.push(Object.fromEntries(proxy.calls))
      }
      results.push({ scenario: scenario.name, scans })
    }
    await proxy.stop()
    process.stdout.write(`BENCH_RESULT ${JSON.stringify(results)}\n`)
  } finally {
    await app.terminate()
  }
}

await main()
