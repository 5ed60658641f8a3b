import Chain from '#models/chain'
import chainRegistry from '#chains/chain_registry'
import { BLOCK_TIME_SKEW_MS } from '#chains/chain_family'
import { testChainConnection, type ConnectionTest } from '#chains/connection_check'
import { ChainOverview, type ChainSummary } from '#services/operators/chain_overview'
import {
  plural,
  result,
  seconds,
  type CheckResult,
  type DoctorContext,
} from '#services/doctor/doctor_check'

const SETUP = 'Chains: wallets and tokens'
const RPC = 'RPC endpoints'
const CLOCK = 'Clock against the chains'
/** From this many chains without a wallet, one line names them all. */
const GROUP_FROM = 3

/** The chains payers can pay on: enabled, scannable, with a receiving wallet and a token. */
function isWatched(chain: ChainSummary): boolean {
  return (
    chain.enabled &&
    chain.familyLoaded &&
    chain.wallets.enabled > 0 &&
    chain.tokens.some((token) => token.enabled)
  )
}

/**
 * What the chains' configuration and the endpoints' remembered state say
 * (no node is asked): enabled chains that cannot take a payment, endpoints
 * held (rate limited, daily credits spent) and budgets that do not fit.
 */
export async function chainSetupChecks(): Promise<CheckResult[]> {
  const summaries = await new ChainOverview().all()
  const chains = summaries.filter((chain) => chain.enabled)
  const results: CheckResult[] = []
  const withoutWallet: string[] = []
  for (const chain of chains) {
    const n = chain.network
    if (!chain.familyLoaded) {
      results.push(
        result(
          'chain_setup',
          SETUP,
          'warning',
          `${n} is enabled but no loaded plugin brings its family "${chain.family}"`,
          `Add the plugin to PLUGINS, or node ace chain:set ${n} --disable`,
          n
        )
      )
      continue
    }
    if (chain.wallets.enabled === 0) withoutWallet.push(n)
    if (!chain.tokens.some((token) => token.enabled)) {
      results.push(
        result(
          'chain_setup',
          SETUP,
          'warning',
          `${n} is enabled without an enabled token: nothing can be paid on it`,
          `node ace token:set ${n} <symbol> --enable, or node ace chain:set ${n} --disable`,
          n
        )
      )
    }
  }
  // A fresh installation enables every seeded chain: one line for them all rather than one each.
  if (withoutWallet.length >= GROUP_FROM) {
    results.unshift(
      result(
        'chain_setup',
        SETUP,
        'warning',
        `${withoutWallet.length} chains are enabled without a receiving wallet (${withoutWallet.join(', ')}): orders on them are refused`,
        'node ace wallet:add <network> <address> on each network you accept, node ace chain:set <network> --disable on the others'
      )
    )
  } else {
    for (const n of withoutWallet.reverse()) {
      results.unshift(
        result(
          'chain_setup',
          SETUP,
          'warning',
          `${n} is enabled without a receiving wallet: orders on it are refused`,
          `node ace wallet:add ${n} <address>, or node ace chain:set ${n} --disable`,
          n
        )
      )
    }
  }
  if (results.length === 0) {
    results.push(
      result(
        'chain_setup',
        SETUP,
        'ok',
        chains.length === 0
          ? 'No chain is enabled'
          : `${plural(chains.length, 'enabled chain')}, each with a wallet and a token`
      )
    )
  }

  const rpc: CheckResult[] = []
  for (const chain of chains.filter(isWatched)) {
    const n = chain.network
    if (chain.rpcUrls.length === 0) {
      rpc.push(
        result(
          'rpc_endpoints',
          RPC,
          'problem',
          `${n} takes payments but has no RPC endpoint: nothing is scanned`,
          `node ace chain:set ${n} --rpc <url>`,
          n
        )
      )
      continue
    }
    for (const endpoint of chain.endpoints) {
      if (endpoint.heldUntil === null) continue
      const why =
        endpoint.state === 'credits'
          ? 'its daily credits are spent (HTTP 402)'
          : 'it asked to wait (rate limited)'
      const allHeld = chain.endpoints.every((other) => other.heldUntil !== null)
      rpc.push(
        result(
          'rpc_endpoints',
          RPC,
          allHeld ? 'problem' : 'warning',
          `${n}: ${endpoint.url} is held until ${new Date(endpoint.heldUntil).toISOString()}: ${why}${allHeld ? '; no endpoint is left to scan with' : ''}`,
          `Add another endpoint (node ace chain:set ${n} --rpc <url> --rpc <url>) or a paid plan's key (--api-key); see the chain's page`,
          n
        )
      )
    }
    if (chain.load?.warning) {
      rpc.push(
        result(
          'rpc_endpoints',
          RPC,
          'warning',
          `${n}: ${chain.load.warning}`,
          `node ace chain:list shows the budget; raise the scan interval (node ace chain:set ${n} --scan-interval <s>) or add endpoints`,
          n
        )
      )
    }
  }
  return [...results, ...rpc]
}

/**
 * Asks each endpoint of every chain payers can pay on for its head (one
 * cheap call, short timeout): unreachable endpoints, and the local clock
 * against the newest block's time.
 */
export async function liveChainChecks(context: DoctorContext): Promise<CheckResult[]> {
  const summaries = await new ChainOverview().all()
  const watched = new Set(
    summaries
      .filter(isWatched)
      .filter((chain) => chain.rpcUrls.length > 0)
      .map((chain) => chain.network)
  )
  const watchedChains = await Chain.query()
    .whereIn('network', [...watched])
    .orderBy('sort_order')
    .orderBy('id')
  const chains = watchedChains.filter(
    (chain) => typeof chainRegistry.find(chain.family)?.head === 'function'
  )
  if (chains.length === 0) {
    return [
      result('rpc_endpoints', RPC, 'ok', 'No chain takes payments yet: no endpoint to ask'),
      result(
        'clock_skew',
        CLOCK,
        'ok',
        'No chain takes payments yet: nothing to compare the clock with'
      ),
    ]
  }
  const started = Date.now()
  const tests = await Promise.all(
    chains.map((chain) =>
      testChainConnection(chain, chainRegistry.find(chain.family)!, context.rpcTimeoutMs)
    )
  )
  // The context's clock (a test may set it), moved on by the time the answers took.
  const now = context.now + (Date.now() - started)
  const blockTimes = new Map(chains.map((chain) => [chain.network, chain.blockTimeMs]))
  return [...tests.flatMap((test) => reachability(test)), ...clockSkew(tests, blockTimes, now)]
}

function reachability(test: ConnectionTest): CheckResult[] {
  const n = test.network
  const failed = test.endpoints.filter((endpoint) => !endpoint.ok)
  if (failed.length === 0) {
    const head = test.endpoints[0]?.head
    return [
      result(
        'rpc_endpoints',
        RPC,
        'ok',
        `${n}: ${plural(test.endpoints.length, 'endpoint')} answered${head ? ` (${head.kind} ${head.number})` : ''}`,
        null,
        n
      ),
    ]
  }
  const all = failed.length === test.endpoints.length
  return failed.map((endpoint) =>
    result(
      'rpc_endpoints',
      RPC,
      all ? 'problem' : 'warning',
      `${n}: ${endpoint.url} did not answer: ${endpoint.error}${all ? '; payments on this chain are not seen' : ''}`,
      `Check the node or provider (the chain's page has "Test connection"), or replace it: node ace chain:set ${n} --rpc <url>`,
      n
    )
  )
}

/**
 * The newest block's time against this machine's clock. A block from the
 * future means the clock is behind (payments look later than they are and
 * may be taken for late ones); a head far in the past means the clock is
 * ahead or the endpoint lags (one chain alone cannot tell which).
 */
function clockSkew(
  tests: ConnectionTest[],
  blockTimes: Map<string, number>,
  now: number
): CheckResult[] {
  const results: CheckResult[] = []
  const fix =
    'Synchronise the clock with NTP (timedatectl set-ntp true, or chrony/ntpd) and check the endpoint is in sync'
  for (const test of tests) {
    const times = test.endpoints
      .map((endpoint) => endpoint.head?.time ?? null)
      .filter((time): time is number => time !== null)
    if (times.length === 0) continue
    const chain = test.network
    const newest = Math.max(...times)
    const blockTimeMs = blockTimes.get(chain) ?? 0
    if (newest - now > BLOCK_TIME_SKEW_MS) {
      results.push(
        result(
          'clock_skew',
          CLOCK,
          'problem',
          `${chain}: the newest block is dated ${seconds(newest - now)} after this machine's clock: the clock is behind`,
          fix,
          chain
        )
      )
    } else if (now - newest > BLOCK_TIME_SKEW_MS + 3 * blockTimeMs) {
      results.push(
        result(
          'clock_skew',
          CLOCK,
          'warning',
          `${chain}: the newest block is ${seconds(now - newest)} older than this machine's clock: the clock is ahead, or the endpoint lags behind the chain`,
          fix,
          chain
        )
      )
    } else {
      results.push(
        result(
          'clock_skew',
          CLOCK,
          'ok',
          `${chain}: within ${seconds(Math.abs(now - newest))} of the newest block`,
          null,
          chain
        )
      )
    }
  }
  if (results.length === 0)
    results.push(
      result(
        'clock_skew',
        CLOCK,
        'ok',
        'No endpoint reports block times: nothing to compare the clock with'
      )
    )
  return results
}
