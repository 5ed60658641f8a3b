import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/operator_command'

export default class WalletRemove extends OperatorCommand {
  static commandName = 'wallet:remove'
  static description = 'Remove a receiving address (refused while orders wait on it)'

  @args.string({ description: 'Network name' })
  declare network: string

  @args.string({ description: 'Receiving address' })
  declare address: string

  @flags.boolean({ description: 'Remove even though orders still wait for payments to it' })
  declare force?: boolean

  async execute() {
    const { default: operator } = await import('#services/operator_service')
    const wallet = await operator.removeWallet(this.network, this.address, this.force === true)
    this.logger.success(`Removed wallet ${wallet.address} from ${wallet.network}`)
  }
}
