import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/operator_command'

export default class WalletAdd extends OperatorCommand {
  static commandName = 'wallet:add'
  static description = 'Add a receiving address to a network'

  @args.string({ description: 'Network name' })
  declare network: string

  @args.string({ description: 'Receiving address' })
  declare address: string

  async execute() {
    const { WalletAdmin } = await import('#services/operators/wallet_admin')
    const wallets = await this.app.container.make(WalletAdmin)
    const wallet = await wallets.add(this.network, this.address)
    this.logger.success(`Added wallet ${wallet.address} on ${wallet.network}`)
  }
}
