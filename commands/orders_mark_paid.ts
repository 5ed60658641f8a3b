import { args } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/operator_command'

export default class OrdersMarkPaid extends OperatorCommand {
  static commandName = 'orders:mark-paid'
  static description =
    'Repair: mark a waiting or expired on-chain order paid by a transaction that the chain confirms'

  @args.string({ description: 'trade_id of the order' })
  declare tradeId: string

  @args.string({ description: 'Transaction reference (hash; TON: ton:<raw>:<lt>:<hash> or <lt>:<hash>)' })
  declare reference: string

  async execute() {
    const { default: Order, OrderStatus } = await import('#models/order')
    const { default: transferVerifier } = await import('#services/transfer_verifier')
    const { default: paymentService } = await import('#services/payment_service')
    const { default: BusinessError } = await import('#exceptions/business_error')

    const order = await Order.findBy('trade_id', this.tradeId)
    if (!order) throw new OperatorError(`No order with trade_id ${this.tradeId}`)
    if (!order.isOnChain) throw new OperatorError(`Order ${this.tradeId} is not an on-chain order`)
    if (order.status !== OrderStatus.WAITING && order.status !== OrderStatus.EXPIRED) {
      throw new OperatorError(`Order ${this.tradeId} has status ${order.status}; only 1 or 3 can be repaired`)
    }
    try {
      const transfer = await transferVerifier.verify(order, this.reference, 'admin')
      const outcome = await paymentService.markPaid(order.id, {
        reference: transfer.reference,
        source: 'admin',
        paidAt: transfer.timestamp,
      })
      const notified = outcome.notified ? `; callback queued for ${outcome.notified.tradeId}` : ''
      this.logger.success(`Order ${this.tradeId} is paid by ${transfer.reference}${notified}`)
    } catch (error) {
      if (error instanceof BusinessError) throw new OperatorError(`${error.message} (${error.businessCode})`)
      throw error
    }
  }
}
