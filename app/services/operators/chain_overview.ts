import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Token from '#models/token'
import chainRegistry from '#chains/chain_registry'
import { chainLoad, type ChainLoad } from '#chains/chain_load'
import { rememberedEndpoints } from '#chains/endpoint_memory'
import type { RememberedEndpoint } from '#chains/rpc_pool'
import { maskSecret, redactSecrets, redactUrl, urlCredentials } from '#support/http/redaction'
import { OperatorError } from '#support/cli/operator_error'

/** A token as listings show it. */
export type TokenSummary = {
  id: number
  network: string
  symbol: string
  /** Contract (mint, master) in stored form; null for the native coin. */
  contract: string | null
  decimals: number
  amountPrecision: number
  enabled: boolean
}

/** Where the chain's scanner stands (chain_cursors). */
export type ScanState = {
  /** Epoch ms of the last run; null: never scanned. */
  lastScanAt: number | null
  /** The last run's error, secrets masked ('' when it went well). */
  lastError: string
  /** The last run stopped midway and kept its progress (rate limit, outage). */
  interrupted: boolean
  caughtUp: boolean
  /** The family's cursor as stored (JSON), shortened. */
  cursor: string
}

/**
 * An RPC endpoint of a chain and what the runs remember of it
 * (rpc_endpoints, app/chains/endpoint_memory.ts): held, because it asked
 * for a wait longer than a request's timeout (`rate_limited`) or its daily
 * credits are spent (`credits`, HTTP 402: until 00:00 UTC); else `fine`.
 * `unknown` when the API key cannot be read (APP_KEY changed): the
 * endpoints are remembered by a digest of URL and key.
 */
export type EndpointSummary = {
  /** Masked like rpcUrls. */
  url: string
  state: 'fine' | 'rate_limited' | 'credits' | 'unknown'
  /** Epoch ms the hold ends; null when not held. */
  heldUntil: number | null
  /** Why it is held, secrets masked ('' when not held). */
  holdReason: string
  /** The same without what `state` says already: the endpoint's own answer, or the wait it asked for. */
  holdDetail: string
  /** A hold that is over: its kind and when it ended (null when none was remembered). */
  lastHold: { kind: 'rate_limited' | 'credits'; until: number } | null
  /** Widest eth_getLogs block range it accepted after refusing a wider one; null: none learned. */
  logRange: number | null
}

/**
 * A chain as the console and `chain:list` show it. Holds no secret: URLs
 * are masked where they carry a key, the API key is a hint (its last
 * characters at most).
 */
export type ChainSummary = {
  id: number
  network: string
  family: string
  /** Whether an enabled plugin brings the family (else nothing can be done with the chain). */
  familyLoaded: boolean
  /** Whether the family can report its head (the "test connection" button). */
  canTestConnection: boolean
  /** Whether the family can be told of new heads over a WebSocket (chain:set --ws); else it is polled. */
  canWatchHeads: boolean
  displayName: string
  enabled: boolean
  rpcUrls: string[]
  /** The same endpoints, in that order, with their remembered state. */
  endpoints: EndpointSummary[]
  /** The WebSocket endpoint of head notifications, masked; null when none (polled). */
  wsUrl: string | null
  apiKeySet: boolean
  /** The API key as listings show it ('' when none, "unreadable" when APP_KEY changed). */
  apiKeyHint: string
  confirmations: number
  scanIntervalSeconds: number
  blockTimeSeconds: number
  /** The operator's request budget of each endpoint; null: the provider's default. */
  requestsPerSecond: number | null
  requestsPerDay: number | null
  explorerTxUrl: string
  options: Record<string, unknown>
  tokens: TokenSummary[]
  wallets: { total: number; enabled: number }
  scan: ScanState
  /** Requests a day scanning costs against the endpoints' budget; null when it cannot be worked out. */
  load: ChainLoad | null
}

type CursorRow = {
  network: string
  cursor: string | null
  last_scan_at: unknown
  last_error: string | null
  caught_up: unknown
}

const CURSOR_EXCERPT = 120

function apiKeyHint(chain: Chain): string {
  try {
    return maskSecret(chain.rpcApiKey())
  } catch {
    return 'unreadable (APP_KEY?)'
  }
}

/** The lead of each hold's reason (rpc_pool.ts), which the state says already. */
const HOLD_LEADS = [
  /^its daily credits are spent \(HTTP 402\) until 00:00 UTC:?\s*/,
  /^rate limited:?\s*/,
]

function holdDetail(reason: string): string {
  const rest = HOLD_LEADS.reduce((text, lead) => text.replace(lead, ''), reason)
  return rest.charAt(0).toUpperCase() + rest.slice(1)
}

/** The endpoints of a chain as the runs remember them, at `now`. */
async function endpointSummaries(chain: Chain, now: number): Promise<EndpointSummary[]> {
  let apiKey: string
  try {
    apiKey = chain.rpcApiKey()
  } catch {
    return chain.rpcUrls.map((url) => ({
      url: redactUrl(url),
      state: 'unknown',
      heldUntil: null,
      holdReason: '',
      holdDetail: '',
      lastHold: null,
      logRange: null,
    }))
  }
  const known =
    chain.rpcUrls.length > 0
      ? await rememberedEndpoints(chain.rpcUrls, apiKey)
      : new Map<string, RememberedEndpoint>()
  return chain.rpcUrls.map((url) => {
    const remembered = known.get(url) ?? null
    const kind = remembered?.holdKind ?? null
    const held = kind !== null && remembered!.holdUntil > now
    const reason = held
      ? redactSecrets(remembered!.holdReason, [apiKey, ...urlCredentials(url)])
      : ''
    return {
      url: redactUrl(url),
      state: held ? kind : 'fine',
      heldUntil: held ? remembered!.holdUntil : null,
      holdReason: reason,
      holdDetail: holdDetail(reason),
      lastHold:
        kind !== null && !held && remembered!.holdUntil > 0
          ? { kind, until: remembered!.holdUntil }
          : null,
      logRange: remembered?.logRange ?? null,
    }
  })
}

function scanState(row: CursorRow | undefined): ScanState {
  const lastScanAt = row ? Number(row.last_scan_at) : 0
  const error = row?.last_error ?? ''
  const interrupted = error.startsWith('interrupted: ')
  const cursor = row?.cursor ?? ''
  return {
    lastScanAt: lastScanAt > 0 ? lastScanAt : null,
    lastError: redactSecrets(interrupted ? error.slice('interrupted: '.length) : error),
    interrupted,
    caughtUp: row ? Boolean(row.caught_up) : true,
    cursor: cursor.length > CURSOR_EXCERPT ? `${cursor.slice(0, CURSOR_EXCERPT)}…` : cursor,
  }
}

export function tokenSummary(token: Token): TokenSummary {
  return {
    id: token.id,
    network: token.network,
    symbol: token.symbol,
    contract: token.contract,
    decimals: token.decimals,
    amountPrecision: token.amountPrecision,
    enabled: token.enabled,
  }
}

/**
 * The read side of the chains: every chain with its tokens, wallet counts,
 * scanner state, request load and what its endpoints asked for (a hold, a
 * log range), in a fixed number of queries plus one per chain for its endpoints.
 */
export class ChainOverview {
  async all(): Promise<ChainSummary[]> {
    return this.#summaries(await Chain.query().orderBy('sort_order').orderBy('id'))
  }

  /** One chain; an unknown network is refused. */
  async one(network: string): Promise<ChainSummary> {
    const chain = await Chain.findBy('network', network.toLowerCase())
    if (!chain)
      throw new OperatorError(`Unknown network "${network}"`, {
        key: 'unknown_network_short',
        args: { network },
      })
    const [summary] = await this.#summaries([chain])
    return summary
  }

  async #summaries(chains: Chain[]): Promise<ChainSummary[]> {
    if (chains.length === 0) return []
    const networks = chains.map((chain) => chain.network)
    const [tokens, walletCounts, cursors] = await Promise.all([
      Token.query().whereIn('network', networks).orderBy('id'),
      db
        .from('wallets')
        .whereIn('network', networks)
        .groupBy('network', 'enabled')
        .select('network', 'enabled')
        .count('* as total'),
      db
        .from('chain_cursors')
        .whereIn('network', networks)
        .select('network', 'cursor', 'last_scan_at', 'last_error', 'caught_up') as Promise<
        CursorRow[]
      >,
    ])
    const now = Date.now()
    const endpoints = await Promise.all(chains.map((chain) => endpointSummaries(chain, now)))
    const summaries: ChainSummary[] = []
    for (const [index, chain] of chains.entries()) {
      const own = tokens.filter((token) => token.network === chain.network)
      const counts = walletCounts.filter((row) => row.network === chain.network)
      const total = counts.reduce((sum, row) => sum + Number(row.total), 0)
      const enabled = counts
        .filter((row) => Boolean(row.enabled))
        .reduce((sum, row) => sum + Number(row.total), 0)
      const family = chainRegistry.find(chain.family)
      const enabledTokens = own.filter((token) => token.enabled).length
      summaries.push({
        id: chain.id,
        network: chain.network,
        family: chain.family,
        familyLoaded: family !== null,
        canTestConnection: typeof family?.head === 'function',
        canWatchHeads: typeof family?.watchHeads === 'function',
        displayName: chain.displayName,
        enabled: chain.enabled,
        rpcUrls: chain.rpcUrls.map((url) => redactUrl(url)),
        endpoints: endpoints[index],
        wsUrl: chain.wsUrl ? redactUrl(chain.wsUrl) : null,
        apiKeySet: (chain.apiKey ?? '') !== '',
        apiKeyHint: apiKeyHint(chain),
        confirmations: chain.confirmations,
        scanIntervalSeconds: chain.scanIntervalSeconds,
        blockTimeSeconds: chain.blockTimeMs / 1000,
        requestsPerSecond: chain.rpcRequestsPerSecond ?? null,
        requestsPerDay: chain.rpcRequestsPerDay ?? null,
        explorerTxUrl: chain.explorerTxUrl,
        options: chain.options ?? {},
        tokens: own.map(tokenSummary),
        wallets: { total, enabled },
        scan: scanState(cursors.find((row) => row.network === chain.network)),
        load: await chainLoad(chain, enabled, enabledTokens).catch(() => null),
      })
    }
    return summaries
  }
}

const chainOverview = new ChainOverview()
export default chainOverview
