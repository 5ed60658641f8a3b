import { args } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/operator_command'

export default class CallbacksRedeliver extends OperatorCommand {
  static commandName = 'callbacks:redeliver'
  static description = 'Send the merchant callback of a paid order again, from a fresh retry budget'

  @args.string({ description: 'trade_id of the paid order (or of its paid child)' })
  declare tradeId: string

  async execute() {
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const { default: Order, OrderStatus } = await import('#models/order')
    const { default: callbackOutbox } = await import('#callbacks/callback_outbox')
    const { default: callbackDeliverer } = await import('#callbacks/callback_deliverer')

    let order = await Order.findBy('trade_id', this.tradeId)
    if (!order) throw new OperatorError(`No order with trade_id ${this.tradeId}`)
    // The merchant is told about the parent only.
    if (order.parentId !== null) order = await Order.findOrFail(order.parentId)
    if (order.status !== OrderStatus.PAID) {
      throw new OperatorError(`Order ${order.tradeId} is not paid (status ${order.status}); there is nothing to tell`)
    }
    const target = order
    await db.transaction((trx) => callbackOutbox.requeue(trx, target))
    const report = await callbackDeliverer.runOnce()
    const fresh = await Order.findOrFail(target.id)
    this.logger.success(
      `Callback of ${target.tradeId} queued again; now ${fresh.callbackStatus}` +
        (report.claimed === 0 ? ' (another worker is sending it)' : '')
    )
  }
}
