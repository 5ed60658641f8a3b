import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class OrdersMarkPaid extends OperatorCommand {
  static commandName = 'orders:mark-paid'
  static description =
    'Repair: mark a waiting or expired on-chain order paid by a transaction that the chain confirms'

  @args.string({ description: 'trade_id of the order' })
  declare tradeId: string

  @args.string({
    description: 'Transaction reference (hash; TON: ton:<raw>:<lt>:<hash> or <lt>:<hash>)',
  })
  declare reference: string

  async execute() {
    const { default: orders } = await import('#services/operators/order_admin')
    const paid = await orders.markPaid(this.tradeId, this.reference)
    const notified = paid.notified ? `; callback queued for ${paid.notified.tradeId}` : ''
    this.logger.success(`Order ${paid.order.tradeId} is paid by ${paid.reference}${notified}`)
  }
}
