import { OperatorCommand } from '#support/operator_command'

export default class CallbacksDeliver extends OperatorCommand {
  static commandName = 'callbacks:deliver'
  static description = 'Deliver the merchant callbacks that are due now'

  async execute() {
    const { default: callbackDeliverer } = await import('#callbacks/callback_deliverer')
    const report = await callbackDeliverer.drain()
    this.logger.success(
      `Attempted ${report.claimed} callback(s): ${report.delivered} delivered, ` +
        `${report.retrying} to retry, ${report.failed} failed for good` +
        (report.held ? `, ${report.held} held (callback format not loaded: its plugin is turned off)` : '')
    )
  }
}
