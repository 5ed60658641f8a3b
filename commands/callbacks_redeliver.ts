import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class CallbacksRedeliver extends OperatorCommand {
  static commandName = 'callbacks:redeliver'
  static description = 'Send the merchant callback of a paid order again, from a fresh retry budget'

  @args.string({ description: 'trade_id of the paid order (or of its paid child)' })
  declare tradeId: string

  async execute() {
    const { default: orders } = await import('#services/operators/order_admin')
    const { order, report } = await orders.resendCallback(this.tradeId)
    this.logger.success(
      `Callback of ${order.tradeId} queued again; now ${order.callbackStatus}` +
        (report.claimed === 0 ? ' (another worker is sending it)' : '')
    )
  }
}
