import { OperatorCommand } from '#support/cli/operator_command'

export default class OrdersExpire extends OperatorCommand {
  static commandName = 'orders:expire'
  static description = 'Expire waiting orders past their expiration time and release their amounts'

  async execute() {
    const { default: orderExpiry } = await import('#services/order_expiry')
    const { Progress } = await import('#support/cli/progress')
    // On stderr, at most once a second while batches run, and a last line.
    const progress = new Progress('orders:expire')
    const count = await orderExpiry.expireDue(Date.now(), (expired) => progress.update({ expired }))
    progress.done({ expired: count })
    this.logger.success(`Expired ${count} order(s)`)
  }
}
