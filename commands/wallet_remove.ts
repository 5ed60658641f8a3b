import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

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
    const { default: wallets, WalletInUseError } = await import('#services/operators/wallet_admin')
    try {
      const wallet = await wallets.remove(this.network, this.address, this.force === true)
      this.logger.success(`Removed wallet ${wallet.address} from ${wallet.network}`)
    } catch (error) {
      if (error instanceof WalletInUseError)
        throw new OperatorError(`${error.message}; or use --force`)
      throw error
    }
  }
}
