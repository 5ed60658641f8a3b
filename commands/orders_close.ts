import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class OrdersClose extends OperatorCommand {
  static commandName = 'orders:close'
  static description =
    'Close a waiting order (status 1 or 4 → 3) and release its amount lock (a parent takes its waiting child along)'

  @args.string({ description: 'trade_id of the order' })
  declare tradeId: string

  async execute() {
    const { default: orders } = await import('#services/operators/order_admin')
    const { order } = await orders.close(this.tradeId)
    this.logger.success(`Closed order ${order.tradeId} (status 3); its amount lock is released`)
  }
}
