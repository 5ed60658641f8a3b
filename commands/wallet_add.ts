import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class WalletAdd extends OperatorCommand {
  static commandName = 'wallet:add'
  static description = 'Add a receiving address to a network'

  @args.string({ description: 'Network name' })
  declare network: string

  @args.string({ description: 'Receiving address' })
  declare address: string

  async execute() {
    const { default: wallets } = await import('#services/operators/wallet_admin')
    const wallet = await wallets.add(this.network, this.address)
    this.logger.success(`Added wallet ${wallet.address} on ${wallet.network}`)
    // A network seeded disabled (or disabled since) takes no order until it is enabled.
    const { default: Chain } = await import('#models/chain')
    const chain = await Chain.findBy('network', wallet.network)
    if (chain && !chain.enabled) {
      this.logger.info(
        `${chain.network} is disabled: it takes orders once enabled, node ace chain:set ${chain.network} --enable (check its RPC URLs first: node ace chain:list)`
      )
    }
  }
}
