import { flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class WalletList extends OperatorCommand {
  static commandName = 'wallet:list'
  static description = 'List receiving addresses'

  @flags.string({ description: 'Only this network' })
  declare network?: string

  async execute() {
    const { default: admin } = await import('#services/operators/wallet_admin')
    const wallets = await admin.list(this.network)
    this.printTable(
      ['network', 'address', 'enabled'],
      wallets.map((wallet) => [wallet.network, wallet.address, wallet.enabled ? 'yes' : 'no'])
    )
  }
}
