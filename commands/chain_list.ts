import { OperatorCommand } from '#support/operator_command'

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
    this.printTable(
      ['network', 'family', 'enabled', 'confirmations', 'tokens', 'wallets', 'rpc', 'last scan'],
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
        chain.rpcUrls.join(' '),
        this.#scanState(cursors.find((row) => row.network === chain.network)),
      ])
    )
  }

  #scanState(row: CursorRow | undefined) {
    if (!row || Number(row.last_scan_at) === 0) return 'never'
    const when = new Date(Number(row.last_scan_at)).toISOString()
    if (row.last_error) return `${when} FAILED: ${row.last_error.slice(0, 80)}`
    return row.caught_up ? when : `${when} (catching up)`
  }
}
