import { OperatorCommand } from '#support/operator_command'

export default class OrdersExpire extends OperatorCommand {
  static commandName = 'orders:expire'
  static description = 'Expire waiting orders past their expiration time and release their amounts'

  async execute() {
    const { default: orderExpiry } = await import('#services/order_expiry')
    const count = await orderExpiry.expireDue()
    this.logger.success(`Expired ${count} order(s)`)
  }
}
