import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'
import { redactUrl } from '#support/http/redaction'

export default class ChainSet extends OperatorCommand {
  static commandName = 'chain:set'
  static description =
    'Configure a chain: enable/disable, RPC and WebSocket URLs, confirmations, scan interval, explorer link'

  @args.string({
    description: 'Network name (tron, ethereum, bsc, polygon, plasma, solana, ton ...)',
  })
  declare network: string

  @flags.boolean({ description: 'Enable the chain' })
  declare enable?: boolean

  @flags.boolean({ description: 'Disable the chain (new orders on it get 10014)' })
  declare disable?: boolean

  @flags.array({
    description: 'RPC endpoint URL (repeatable, in order of preference; replaces the list)',
  })
  declare rpc?: string[]

  @flags.string({
    description:
      'WebSocket endpoint (ws:// or wss://) whose new heads trigger a scan at once (EVM: eth_subscribe newHeads); "" removes it',
    allowEmptyValue: true,
  })
  declare ws?: string

  @flags.number({ description: 'Confirmations a transfer needs before it counts' })
  declare confirmations?: number

  @flags.number({
    description:
      'Longest time between two scans, in seconds: the poll interval (default: the block time); with --ws, the safety net between heads',
  })
  declare scanInterval?: number

  @flags.number({
    description: 'Typical seconds between two blocks (sizes the late-payment grace), e.g. 0.4',
  })
  declare blockTime?: number

  @flags.string({ description: 'Name shown to payers' })
  declare displayName?: string

  @flags.string({
    description: 'API key of the RPC service (TronGrid: TRON-PRO-API-KEY); "" clears it',
    allowEmptyValue: true,
  })
  declare apiKey?: string

  @flags.string({
    description:
      'Block explorer URL of a transaction, {tx} standing for it (https://etherscan.io/tx/{tx}); "" clears it',
    allowEmptyValue: true,
  })
  declare explorer?: string

  @flags.string({
    description:
      'Requests per second to each RPC endpoint (e.g. 1 or 0.5); "" returns to the provider default',
    allowEmptyValue: true,
  })
  declare requestsPerSecond?: string

  @flags.string({
    description:
      'Requests per UTC day to each RPC endpoint (0: no daily cap); "" returns to the provider default',
    allowEmptyValue: true,
  })
  declare requestsPerDay?: string

  @flags.string({
    description: 'Family of a NEW network (one an enabled plugin brings: see plugins:list)',
  })
  declare family?: string

  @flags.boolean({
    description:
      'With --family and --rpc: add the new network without testing its RPC URL (an endpoint not reachable from here yet)',
  })
  declare skipCheck?: boolean

  @flags.array({
    description:
      'Family option key=value (repeatable; EVM: chainId, blockRange, reorgDepth, traces=auto|debug|parity|off); key= removes it',
  })
  declare option?: string[]

  async execute() {
    if (this.enable && this.disable) throw new OperatorError('Give --enable or --disable, not both')
    const {
      default: chains,
      budgetInput,
      optionsInput,
    } = await import('#services/operators/chain_admin')
    const { chain, tested } = await chains.setOrAdd(
      this.network,
      {
        enabled: this.enable ? true : this.disable ? false : undefined,
        rpcUrls: this.rpc,
        wsUrl: this.ws,
        confirmations: this.confirmations,
        scanIntervalSeconds: this.scanInterval,
        blockTimeSeconds: this.blockTime,
        displayName: this.displayName,
        family: this.family,
        options: this.option ? optionsInput(this.option, '--option') : undefined,
        apiKey: this.apiKey,
        explorerTxUrl: this.explorer,
        requestsPerSecond: budgetInput(this.requestsPerSecond, '--requests-per-second'),
        requestsPerDay: budgetInput(this.requestsPerDay, '--requests-per-day'),
      },
      { unchecked: this.skipCheck }
    )
    const options = Object.entries(chain.options)
      .map(([key, value]) => `${key}=${value}`)
      .join(' ')
    this.logger.success(
      `${chain.network} (${chain.displayName}): ${chain.enabled ? 'enabled' : 'disabled'}, ` +
        (options ? `options ${options}, ` : '') +
        `${chain.confirmations} confirmations, scan every ${chain.scanIntervalSeconds}s, ` +
        `block time ${chain.blockTimeMs / 1000}s, ` +
        `RPC: ${chain.rpcUrls.map((url) => redactUrl(url)).join(' ') || 'none'}${chain.apiKey ? ', API key set' : ''}, ` +
        `WebSocket: ${chain.wsUrl ? `${redactUrl(chain.wsUrl)} (a scan on every new head)` : 'none (polled)'}, ` +
        `explorer: ${chain.explorerTxUrl || 'none'}, ` +
        `request budget: ${this.#budget(chain.rpcRequestsPerSecond, chain.rpcRequestsPerDay)}` +
        (tested ? '; its RPC URL answered and serves this network' : '')
    )
    if (this.family && this.skipCheck && this.rpc?.length)
      this.logger.warning(
        `${chain.network}: its RPC URL was not tested (--skip-check): test it on the console's chain page (Test connection) before enabling it`
      )
  }

  #budget(perSecond: number | null, perDay: number | null) {
    if (perSecond === null && perDay === null) return 'provider default'
    const second = perSecond === null ? 'default/s' : `${perSecond}/s`
    const day = perDay === null ? 'default/day' : perDay === 0 ? 'no daily cap' : `${perDay}/day`
    return `${second}, ${day} per endpoint`
  }
}
