import { OperatorCommand } from '#support/cli/operator_command'
import type { ScanState } from '#services/operators/chain_overview'

export default class ChainList extends OperatorCommand {
  static commandName = 'chain:list'
  static description = 'List chains, their tokens and wallets'

  async execute() {
    const { ChainOverview } = await import('#services/operators/chain_overview')
    const chains = await new ChainOverview().all()
    this.printTable(
      [
        'network',
        'family',
        'enabled',
        'confirmations',
        'tokens',
        'wallets',
        'rpc',
        'api key',
        'requests/day',
        'budget/day',
        'last scan',
      ],
      chains.map((chain) => [
        chain.network,
        chain.family,
        chain.enabled ? 'yes' : 'no',
        chain.confirmations,
        chain.tokens.map((token) => `${token.symbol}${token.enabled ? '' : ' (off)'}`).join(', '),
        chain.wallets.total,
        // URLs may carry the provider's key: shown masked, like the API key.
        chain.rpcUrls.join(' ') + (chain.wsUrl ? ` ${chain.wsUrl}` : ''),
        chain.apiKeyHint,
        this.#estimate(chain.load),
        this.#budget(chain.load),
        this.#scanState(chain.scan),
      ])
    )
    for (const chain of chains) if (chain.load?.warning) this.logger.warning(chain.load.warning)
    // Endpoints the scanner leaves alone for now (a long Retry-After, spent daily credits).
    for (const chain of chains) {
      for (const endpoint of chain.endpoints) {
        if (endpoint.heldUntil === null) continue
        const why =
          endpoint.state === 'credits'
            ? 'its daily credits are spent (HTTP 402)'
            : 'it asked to wait (Retry-After)'
        this.logger.warning(
          `${chain.network}: ${endpoint.url} is not asked until ${new Date(endpoint.heldUntil).toISOString()}: ${why}`
        )
      }
    }
  }

  /** Estimated requests a day at the scan interval; "-" when the family gives none. */
  #estimate(load: { estimate: number | null } | null | undefined) {
    return load?.estimate === null || load?.estimate === undefined
      ? '-'
      : load.estimate.toLocaleString('en-US')
  }

  /** The endpoints' daily budget together, and the pace of the first one. */
  #budget(
    load: { perDay: number | null; perSecond: number | null; endpoints: number } | null | undefined
  ) {
    if (!load) return '?'
    if (load.endpoints === 0) return 'no endpoint'
    const day = load.perDay === null ? 'unlimited' : load.perDay.toLocaleString('en-US')
    return load.perSecond === null ? day : `${day} (${load.perSecond}/s)`
  }

  #scanState(scan: ScanState) {
    if (scan.lastScanAt === null) return 'never'
    const when = new Date(scan.lastScanAt).toISOString()
    // An interrupted run kept its progress (app/services/chain_scanner.ts); a failed one saved nothing.
    if (scan.interrupted)
      return `${when} INTERRUPTED, progress kept: ${scan.lastError.slice(0, 80)}`
    if (scan.lastError) return `${when} FAILED: ${scan.lastError.slice(0, 80)}`
    return scan.caughtUp ? when : `${when} (catching up)`
  }
}
