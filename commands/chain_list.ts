import { OperatorCommand } from '#support/operator_command'
import { maskSecret, redactSecrets, redactUrl } from '#support/redaction'

type CursorRow = { last_scan_at: number | string; last_error: string; caught_up: unknown }

export default class ChainList extends OperatorCommand {
  static commandName = 'chain:list'
  static description = 'List chains, their tokens and wallets'

  async execute() {
    const { default: Chain } = await import('#models/chain')
    const { default: Token } = await import('#models/token')
    const { default: Wallet } = await import('#models/wallet')
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const chains = await Chain.query().orderBy('sort_order')
    const cursors = await db.from('chain_cursors').select('network', 'last_scan_at', 'last_error', 'caught_up')
    const tokens = await Token.query().orderBy('id')
    const wallets = await Wallet.query().orderBy('id')
    const { chainLoad } = await import('#chains/chain_load')
    const loads = new Map<number, Awaited<ReturnType<typeof chainLoad>> | null>()
    for (const chain of chains) {
      const watched = wallets.filter((wallet) => wallet.network === chain.network && wallet.enabled).length
      const enabledTokens = tokens.filter((token) => token.network === chain.network && token.enabled).length
      loads.set(chain.id, await chainLoad(chain, watched, enabledTokens).catch(() => null))
    }
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
        tokens
          .filter((token) => token.network === chain.network)
          .map((token) => `${token.symbol}${token.enabled ? '' : ' (off)'}`)
          .join(', '),
        wallets.filter((wallet) => wallet.network === chain.network).length,
        // URLs may carry the provider's key: shown masked, like the API key.
        chain.rpcUrls.map((url) => redactUrl(url)).join(' '),
        this.#apiKeyHint(chain),
        this.#estimate(loads.get(chain.id)),
        this.#budget(loads.get(chain.id)),
        this.#scanState(cursors.find((row) => row.network === chain.network)),
      ])
    )
    for (const load of loads.values()) if (load?.warning) this.logger.warning(load.warning)
  }

  /** Estimated requests a day at the scan interval; "-" when the family gives none. */
  #estimate(load: { estimate: number | null } | null | undefined) {
    return load?.estimate === null || load?.estimate === undefined ? '-' : load.estimate.toLocaleString('en-US')
  }

  /** The endpoints' daily budget together, and the pace of the first one. */
  #budget(load: { perDay: number | null; perSecond: number | null; endpoints: number } | null | undefined) {
    if (!load) return '?'
    if (load.endpoints === 0) return 'no endpoint'
    const day = load.perDay === null ? 'unlimited' : load.perDay.toLocaleString('en-US')
    return load.perSecond === null ? day : `${day} (${load.perSecond}/s)`
  }

  #apiKeyHint(chain: { rpcApiKey(): string }) {
    try {
      return maskSecret(chain.rpcApiKey())
    } catch {
      return 'unreadable (APP_KEY?)'
    }
  }

  #scanState(row: CursorRow | undefined) {
    if (!row || Number(row.last_scan_at) === 0) return 'never'
    const when = new Date(Number(row.last_scan_at)).toISOString()
    // An interrupted run kept its progress (app/services/chain_scanner.ts); a failed one saved nothing.
    if (row.last_error?.startsWith('interrupted: ')) {
      return `${when} INTERRUPTED, progress kept: ${redactSecrets(row.last_error.slice(13)).slice(0, 80)}`
    }
    if (row.last_error) return `${when} FAILED: ${redactSecrets(row.last_error).slice(0, 80)}`
    return row.caught_up ? when : `${when} (catching up)`
  }
}
