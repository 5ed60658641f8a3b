import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/operator_command'

export default class OrdersMarkPaid extends OperatorCommand {
  static commandName = 'orders:mark-paid'
  static description =
    'Repair: mark a waiting or expired on-chain order paid by a transaction that the chain confirms'

  @args.string({ description: 'trade_id of the order' })
  declare tradeId: string

  @args.string({ description: 'Transaction reference (hash; TON: ton:<raw>:<lt>:<hash> or <lt>:<hash>)' })
  declare reference: string

  async execute() {
    const { ManualPayment } = await import('#services/operators/manual_payment')
    const manualPayment = await this.app.container.make(ManualPayment)
    const outcome = await manualPayment.markPaid(this.tradeId, this.reference)
    const notified = outcome.notified ? `; callback queued for ${outcome.notified.tradeId}` : ''
    this.logger.success(`Order ${this.tradeId} is paid by ${outcome.reference}${notified}`)
  }
}
