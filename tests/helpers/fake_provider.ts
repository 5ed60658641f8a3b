import { createHash } from 'node:crypto'
import settings from '#settings/settings_service'
import { HttpStub } from '#tests/helpers/http_stub'

export const SHOP_ID = 'shop-42'
export const SHOP_TOKEN = 'shop-token-secret'

const md5 = (text: string) => createHash('md5').update(text).digest('hex')

/** The provider's request sign, written from the protocol text. */
export function requestSign(fields: Record<string, string>, token = SHOP_TOKEN) {
  const text = Object.keys(fields)
    .filter((key) => key !== 'sign' && fields[key] !== '')
    .sort()
    .map((key) => `${key}=${fields[key]}`)
    .join('&')
  return md5(`${text}&token=${token}`).toUpperCase()
}

/** The provider's notification sign, written from the protocol text. */
export function notificationSign(fields: Record<string, string>, token = SHOP_TOKEN) {
  const order = [
    'code',
    'data[order_id]',
    'data[unique_id]',
    'data[pay_user_id]',
    'data[amount]',
    'data[coin]',
    'data[status]',
    'data[type]',
    'id',
    'status',
  ]
  const text = order
    .filter((key) => fields[key] !== undefined && fields[key] !== '')
    .map((key) => `${key}=${fields[key]}`)
    .join('&')
  return md5(`${text}&token=${token}`)
}

/**
 * The notification the provider sends when `tradeId` (its order
 * `providerOrderId`) was paid 13.80 USDT, signed; `overrides` change fields
 * before signing (a `sign` among them replaces the signature).
 */
export function providerNotification(
  tradeId: string,
  providerOrderId: string,
  overrides: Record<string, string> = {}
) {
  const fields: Record<string, string> = {
    'id': SHOP_ID,
    'status': 'success',
    'code': '10000',
    'data[order_id]': providerOrderId,
    'data[unique_id]': tradeId,
    'data[pay_user_id]': 'payer-9',
    'data[amount]': '13.80',
    'data[coin]': 'USDT',
    'data[status]': '1',
    'data[type]': 'deposit',
    ...overrides,
  }
  return { ...fields, sign: overrides.sign ?? notificationSign(fields) }
}

/** A payment link the fake provider made, and whether the payer paid it there. */
type FakePayment = {
  orderId: string
  amount: string
  coin: string
  paid: boolean
  paidAmount: string
}

/**
 * A local stand-in for the hosted provider's shop API: answers POST
 * /payLink and POST /checkDeposit like the real one, after checking the
 * request sign. It never sends notifications by itself: a test posts them
 * (or, to stand for a notification lost on the way, does not).
 */
export class FakeProvider extends HttpStub {
  mode: 'ok' | 'empty' | 'http500' | 'slow' = 'ok'
  /** The pay_url the next links carry (null: an https link of its own). */
  payUrl: string | null = null
  counter = 0
  badSigns = 0
  /** Payment links by unique_id (our trade_id). */
  payments = new Map<string, FakePayment>()

  constructor() {
    super()
    this.handler = (request, response, body) => {
      const fields = Object.fromEntries(new URLSearchParams(body))
      const json = (status: number, payload: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' })
        response.end(JSON.stringify(payload))
      }
      const endpoint = request.url ?? ''
      if (
        !['/api/payLink', '/api/checkDeposit'].includes(endpoint) ||
        fields.sign !== requestSign(fields)
      ) {
        this.badSigns++
        return json(200, { status: 'error', code: 40001, data: {}, msg: 'bad sign' })
      }
      if (this.mode === 'http500') {
        response.writeHead(500)
        return response.end('oops')
      }
      if (this.mode === 'slow') return // never answers
      if (endpoint === '/api/checkDeposit') {
        const payment = this.payments.get(fields.unique_id)
        // The real API answers an unknown order with an error envelope, HTTP 200.
        if (!payment)
          return json(200, { status: 'error', code: 40004, data: {}, msg: 'order does not exist' })
        return json(200, {
          status: 'success',
          code: 10000,
          data: {
            order_id: payment.orderId,
            unique_id: fields.unique_id,
            status: payment.paid ? 1 : 0,
            amount: payment.paid ? payment.paidAmount : payment.amount,
          },
          msg: 'ok',
        })
      }
      this.counter++
      const data =
        this.mode === 'empty'
          ? { order_id: '', pay_url: '' }
          : {
              order_id: `P-${this.counter}`,
              pay_url: this.payUrl ?? `https://pay.example/checkout/P-${this.counter}`,
            }
      if (this.mode !== 'empty') {
        this.payments.set(fields.unique_id, {
          orderId: data.order_id,
          amount: fields.amount,
          coin: fields.coin,
          paid: false,
          paidAmount: '',
        })
      }
      json(200, { status: 'success', code: 10000, data, msg: 'ok' })
    }
  }

  /**
   * The payer pays the link of `tradeId` on the provider's page (its
   * amount as the provider writes it, 8 decimals, unless told).
   */
  pay(tradeId: string, amount?: string) {
    const payment = this.payments.get(tradeId)
    if (!payment) throw new Error(`the fake provider made no link for ${tradeId}`)
    payment.paid = true
    payment.paidAmount = amount ?? Number(payment.amount).toFixed(8)
  }

  /** The checkDeposit questions asked, by unique_id. */
  statusQuestions() {
    return this.requests
      .filter((entry) => entry.url === '/api/checkDeposit')
      .map((entry) => Object.fromEntries(new URLSearchParams(entry.body)).unique_id)
  }

  /** Enables the provider channel pointing at this server. */
  async configure() {
    this.mode = 'ok'
    this.requests = []
    this.payments.clear()
    await settings.set('provider.enabled', 'true')
    await settings.set('provider.shop_id', SHOP_ID)
    await settings.set('provider.shop_token', SHOP_TOKEN)
    await settings.set('provider.api_url', `${this.url}/api`)
    await settings.set('provider.allow_tokens', 'USDT,TRX')
  }

  /** The form the provider received for the link of `tradeId`. */
  linkRequest(tradeId: string) {
    const found = this.requests
      .map((entry) => Object.fromEntries(new URLSearchParams(entry.body)))
      .find((fields) => fields.unique_id === tradeId)
    return found as Record<string, string> | undefined
  }
}
