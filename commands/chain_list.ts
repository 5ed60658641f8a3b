import { OperatorCommand } from '#support/operator_command'

export default class ChainList extends OperatorCommand {
  static commandName = 'chain:list'
  static description = 'List chains, their tokens and wallets'

  async execute() {
    const { default: Chain } = await import('#models/chain')
    const { default: Token } = await import('#models/token')
    const { default: Wallet } = await import('#models/wallet')
    const chains = await Chain.query().orderBy('sort_order')
    const tokens = await Token.query().orderBy('id')
    const wallets = await Wallet.query().orderBy('id')
    this.printTable(
      ['network', 'family', 'enabled', 'confirmations', 'tokens', 'wallets', 'rpc'],
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
      ])
    )
  }
}
