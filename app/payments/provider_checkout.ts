import db from '@adonisjs/lucid/services/db'
import type Order from '#models/order'
import ProviderOrder from '#models/provider_order'
import Token from '#models/token'
import { ErrorCode } from '#exceptions/error_codes'
import providers, {
  NotificationRejectedError,
  ProviderRequestError,
  type ProviderNotice,
} from '#payments/payment_provider'
import rateService from '#rates/rate_service'
import paymentService from '#services/payment_service'
import { cashierUrl, returnPageUrl } from '#services/order_presenter'
import BusinessError from '#exceptions/business_error'
import { refuseInexactAmount } from '#services/exact_amount'
import { Decimal, ceilToPrecision, toDecimalString, toFixedDigits } from '#support/text/money'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { isWebAddress } from '#support/http/web_address'

export { SPEC_PROVIDER_NETWORK, isProviderTarget } from '#payments/payment_provider'

/** The `receive_address` of a provider order: the provider's name in capitals (`PROVIDER`). */
export function providerAddress(name: string): string {
  return name.toUpperCase()
}

export type OpenedPayment = { amount: string; payUrl: string; providerOrderId: string }

/**
 * The core side of the hosted provider channels (one per installed
 * payment provider, each a switch target under its name): prices a
 * payment, asks that provider for a link (recording it in provider_orders
 * with the provider's name), and turns a verified notification into a
 * payment through the one payment path.
 */
export class ProviderCheckout {
  /**
   * The payment provider answering the `name` network. Without one (its
   * plugin is off), the channel is refused like a disabled provider.
   */
  provider(name: string) {
    if (!providers.has(name)) {
      throw new BusinessError(ErrorCode.PROVIDER_DISABLED, 'Payment provider is not enabled')
    }
    return providers.get(name)
  }

  /** Crypto amount of `order` in `token`, rounded up at the token precision. */
  async quote(
    order: Pick<Order, 'amount' | 'currency'> & { apiKeyId?: number | null },
    token: string
  ): Promise<string> {
    const known = await Token.query()
      .where('symbol', token)
      .where('enabled', true)
      .orderBy('id')
      .first()
    const precision = known?.amountPrecision ?? 2
    const exact = await rateService.convert(
      order.amount,
      order.currency,
      token,
      order.apiKeyId ?? null
    )
    const amount = ceilToPrecision(exact, precision)
    refuseInexactAmount(amount, { amount: order.amount, currency: order.currency, token })
    return toFixedDigits(amount, precision)
  }

  /**
   * Creates the payment at provider `name` for `tradeId` before the order
   * row changes: if the provider fails, nothing of the order is touched.
   */
  async open(
    name: string,
    tradeId: string,
    order: Pick<Order, 'amount' | 'currency' | 'redirectUrl'> & { apiKeyId?: number | null },
    token: string
  ) {
    const provider = this.provider(name)
    const amount = await this.quote(order, token)
    // A failed earlier attempt for the same trade_id is tried again in place.
    const record = await ProviderOrder.updateOrCreate(
      { uniqueId: tradeId },
      {
        provider: name,
        orderId: null,
        providerOrderId: '',
        status: 'creating',
        coin: token,
        amount,
        payUrl: '',
        error: '',
        responseRaw: '',
        notifyRaw: '',
      }
    )
    // Back through the gateway's return page, not to the raw redirect_url: once paid it sends the
    // payer where the order's callback format says (CallbackFormat.returnUrl: a plugin format's
    // signed return fields, native's redirect_url as given), and before the notification has
    // arrived to the cashier, which waits for it.
    const returnUrl = order.redirectUrl ? returnPageUrl(tradeId) : null
    try {
      const payment = await provider.createPayment({
        tradeId,
        coin: token,
        amount,
        returnUrl,
        cashierUrl: cashierUrl(tradeId),
      })
      // The payer is sent to this link: whatever the provider answered, only an http(s) address.
      if (!isWebAddress(payment.payUrl)) {
        throw new ProviderRequestError(
          'its pay_url is not an http(s) address, so the payer is not sent there'
        )
      }
      record.merge({
        status: 'pending',
        providerOrderId: payment.providerOrderId,
        payUrl: payment.payUrl,
        responseRaw: payment.raw.slice(0, 10_000),
      })
      await record.save()
      return {
        amount: toDecimalString(amount),
        payUrl: payment.payUrl,
        providerOrderId: payment.providerOrderId,
      }
    } catch (error) {
      record.merge({ status: 'failed', error: (error as Error).message })
      await record.save()
      if (error instanceof ProviderRequestError) {
        throw BusinessError.parameter(
          `The payment provider did not create a payment link: ${error.message}`
        )
      }
      throw error
    }
  }

  /** Links the provider payment to its order row, in the order's transaction. */
  async attach(trx: TransactionClientContract, tradeId: string, orderId: number) {
    await trx
      .from('provider_orders')
      .where('unique_id', tradeId)
      .update({ order_id: orderId, updated_at: Date.now() })
  }

  /** The link was created but the order could not take it (lost a race). */
  async abandon(tradeId: string, reason: string) {
    await ProviderOrder.query()
      .where('unique_id', tradeId)
      .whereNull('order_id')
      .update({ status: 'failed', error: reason, updated_at: Date.now() })
  }

  /**
   * A notification from provider `name` (its plugin's notify route).
   * Returns when the order is paid (or already was); throws
   * NotificationRejectedError otherwise.
   */
  async handleNotification(
    name: string,
    fields: Record<string, string>,
    raw: string
  ): Promise<void> {
    if (!providers.has(name)) throw new NotificationRejectedError(`no provider ${name}`)
    const notice = await providers.get(name).readNotification(fields)
    await this.applyNotice(name, notice, { notificationRaw: raw })
  }

  /**
   * A payment provider `name` reports paid (by notification or when asked):
   * checked against its order (opened at this provider, provider order id,
   * coin, amount) and paid through the one payment path. Throws
   * NotificationRejectedError.
   */
  async applyNotice(
    name: string,
    notice: ProviderNotice,
    from: { notificationRaw?: string } = {}
  ): Promise<void> {
    const record = await ProviderOrder.findBy('unique_id', notice.uniqueId)
    if (!record) throw new NotificationRejectedError(`unknown unique_id ${notice.uniqueId}`)
    // One provider's word never pays a payment opened at another.
    if (record.provider !== name)
      throw new NotificationRejectedError(
        `unique_id ${notice.uniqueId} was opened at ${record.provider}, not ${name}`
      )
    // A notification is kept as received; a status asked for is not one
    // (the order stays due for reconciliation if it is refused).
    if (from.notificationRaw !== undefined) {
      record.merge({ notifyRaw: from.notificationRaw.slice(0, 10_000), notifiedAt: Date.now() })
      await record.save()
    }

    if (record.orderId === null) throw new NotificationRejectedError('the payment has no order')
    if (record.providerOrderId !== '' && record.providerOrderId !== notice.providerOrderId) {
      throw new NotificationRejectedError(
        `order_id ${notice.providerOrderId} is not ${record.providerOrderId}`
      )
    }
    const order = await db.from('orders').where('id', record.orderId).first()
    if (!order) throw new NotificationRejectedError('the payment has no order')
    if (notice.coin.toUpperCase() !== String(order.token).toUpperCase()) {
      throw new NotificationRejectedError(`coin ${notice.coin} is not ${order.token}`)
    }
    let amount: Decimal
    try {
      amount = new Decimal(notice.amount)
    } catch {
      throw new NotificationRejectedError(`amount ${notice.amount} is not a number`)
    }
    if (!amount.isFinite() || !amount.eq(new Decimal(String(order.actual_amount)))) {
      throw new NotificationRejectedError(
        `amount ${notice.amount} is not ${toDecimalString(String(order.actual_amount))}`
      )
    }
    try {
      await paymentService.markPaid(record.orderId, {
        reference: notice.providerOrderId,
        source: 'provider',
      })
    } catch (error) {
      if (error instanceof BusinessError) {
        throw new NotificationRejectedError(`${error.message} (${error.businessCode})`)
      }
      throw error
    }
  }
}

const providerCheckout = new ProviderCheckout()
export default providerCheckout
