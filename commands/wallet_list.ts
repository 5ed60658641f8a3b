import { flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/operator_command'

export default class WalletList extends OperatorCommand {
  static commandName = 'wallet:list'
  static description = 'List receiving addresses'

  @flags.string({ description: 'Only this network' })
  declare network?: string

  async execute() {
    const { default: Wallet } = await import('#models/wallet')
    const query = Wallet.query().orderBy('network').orderBy('id')
    if (this.network) query.where('network', this.network.toLowerCase())
    const wallets = await query
    this.printTable(
      ['network', 'address', 'enabled'],
      wallets.map((wallet) => [wallet.network, wallet.address, wallet.enabled ? 'yes' : 'no'])
    )
  }
}
