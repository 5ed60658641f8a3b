import { OperatorCommand } from '#support/cli/operator_command'
import { Progress } from '#support/cli/progress'

export default class CallbacksDeliver extends OperatorCommand {
  static commandName = 'callbacks:deliver'
  static description = 'Deliver the merchant callbacks that are due now (until none is due)'

  async execute() {
    const { default: callbackDeliverer } = await import('#callbacks/callback_deliverer')
    const progress = new Progress('callbacks:deliver', { rateOf: 'attempted' })
    const counts = (report: {
      claimed: number
      delivered: number
      retrying: number
      failed: number
      inFlight?: number
    }) => ({
      attempted: report.claimed,
      delivered: report.delivered,
      retrying: report.retrying,
      failed: report.failed,
      ...(report.inFlight !== undefined ? { 'in flight': report.inFlight } : {}),
    })
    const report = await callbackDeliverer.drain((current) => progress.update(counts(current)))
    progress.done(counts(report))
    this.logger.success(
      `Attempted ${report.claimed} callback(s): ${report.delivered} delivered, ` +
        `${report.retrying} to retry, ${report.failed} failed for good` +
        (report.held
          ? `, ${report.held} held (callback format not loaded: its plugin is turned off)`
          : '')
    )
  }
}
