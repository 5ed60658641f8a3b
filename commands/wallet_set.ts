import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

export default class WalletSet extends OperatorCommand {
  static commandName = 'wallet:set'
  static description = 'Enable or disable a receiving address, or set its note'

  @args.string({ description: 'Network name' })
  declare network: string

  @args.string({ description: 'Receiving address' })
  declare address: string

  @flags.boolean({ description: 'Hand the address to new orders again' })
  declare enable?: boolean

  @flags.boolean({
    description: 'Hand it to no new order (payments of waiting orders are still watched)',
  })
  declare disable?: boolean

  @flags.string({ description: 'Note shown in listings; "" clears it', allowEmptyValue: true })
  declare note?: string

  async execute() {
    if (this.enable && this.disable) throw new OperatorError('Give --enable or --disable, not both')
    if (!this.enable && !this.disable && this.note === undefined) {
      throw new OperatorError('Nothing to change: give --enable, --disable or --note')
    }
    const { default: wallets } = await import('#services/operators/wallet_admin')
    const wallet = await wallets.update(this.network, this.address, {
      enabled: this.enable ? true : this.disable ? false : undefined,
      note: this.note,
    })
    this.logger.success(
      `${wallet.address} on ${wallet.network}: ${wallet.enabled ? 'enabled' : 'disabled'}${wallet.note ? `, note "${wallet.note}"` : ''}`
    )
  }
}
