import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/operator_command'

export default class CallbacksRedeliver extends OperatorCommand {
  static commandName = 'callbacks:redeliver'
  static description = 'Send the merchant callback of a paid order again, from a fresh retry budget'

  @args.string({ description: 'trade_id of the paid order (or of its paid child)' })
  declare tradeId: string

  async execute() {
    const { default: Order } = await import('#models/order')
    const { default: callbackDeliverer } = await import('#callbacks/callback_deliverer')
    const { CallbackAdmin } = await import('#services/operators/callback_admin')

    const callbacks = await this.app.container.make(CallbackAdmin)
    const target = await callbacks.redeliver(this.tradeId)
    const report = await callbackDeliverer.runOnce()
    const fresh = await Order.findOrFail(target.id)
    this.logger.success(
      `Callback of ${target.tradeId} queued again; now ${fresh.callbackStatus}` +
        (report.claimed === 0 ? ' (another worker is sending it)' : '')
    )
  }
}
