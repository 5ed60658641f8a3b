import { args } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/operator_command'

export default class OrdersClose extends OperatorCommand {
  static commandName = 'orders:close'
  static description = 'Close a waiting order (status 1 or 4 → 3) and release its amount lock (a parent takes its waiting child along)'

  @args.string({ description: 'trade_id of the order' })
  declare tradeId: string

  async execute() {
    const { default: Order } = await import('#models/order')
    const { default: orderService } = await import('#services/order_service')
    const order = await Order.findBy('trade_id', this.tradeId)
    if (!order) throw new OperatorError(`No order with trade_id ${this.tradeId}`)
    const closed = await orderService.close(order)
    if (!closed) {
      throw new OperatorError(`Order ${this.tradeId} is not open (status ${order.status}); nothing to close`)
    }
    this.logger.success(`Closed order ${this.tradeId} (status 3); its amount lock is released`)
  }
}
