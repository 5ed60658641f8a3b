import type {
  PaymentProvider,
  ProviderPayment,
  ProviderPaymentRequest,
  ProviderNotice,
  ProviderStatus,
} from '#payments/payment_provider'
import { NotificationRejectedError } from '#payments/payment_provider'

/**
 * A payment provider for tests that can be asked for a payment's status
 * and never sends a notification (as if every one were lost). `pay()`
 * makes the provider consider a payment paid.
 */
export class ReconcilingProvider implements PaymentProvider {
  readonly name = 'provider'
  payments = new Map<
    string,
    { providerOrderId: string; coin: string; amount: string; paid: boolean }
  >()
  asked: string[] = []
  failing = false

  async ensureUsable() {}

  async createPayment(request: ProviderPaymentRequest): Promise<ProviderPayment> {
    const providerOrderId = `R-${this.payments.size + 1}`
    this.payments.set(request.tradeId, {
      providerOrderId,
      coin: request.coin,
      amount: request.amount,
      paid: false,
    })
    return { providerOrderId, payUrl: `https://pay.example/${providerOrderId}`, raw: '{}' }
  }

  async readNotification(): Promise<ProviderNotice> {
    throw new NotificationRejectedError('this provider never notifies')
  }

  pay(tradeId: string, amount?: string) {
    const payment = this.payments.get(tradeId)!
    payment.paid = true
    if (amount) payment.amount = amount
  }

  async retrieveStatus(payment: {
    tradeId: string
    providerOrderId: string
  }): Promise<ProviderStatus> {
    this.asked.push(payment.tradeId)
    if (this.failing) throw new Error('provider unreachable')
    const known = this.payments.get(payment.tradeId)
    if (!known || !known.paid) return { state: 'pending' }
    return {
      state: 'paid',
      notice: {
        uniqueId: payment.tradeId,
        providerOrderId: known.providerOrderId,
        amount: known.amount,
        coin: known.coin,
      },
      raw: JSON.stringify(known),
    }
  }
}
