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
  const order = ['code', 'data[order_id]', 'data[unique_id]', 'data[pay_user_id]', 'data[amount]', 'data[coin]', 'data[status]', 'data[type]', 'id', 'status']
  const text = order
    .filter((key) => fields[key] !== undefined && fields[key] !== '')
    .map((key) => `${key}=${fields[key]}`)
    .join('&')
  return md5(`${text}&token=${token}`)
}

/**
 * A local stand-in for the hosted provider's shop API: answers POST
 * /payLink like the real one, after checking the request sign.
 */
export class FakeProvider extends HttpStub {
  mode: 'ok' | 'empty' | 'http500' | 'slow' = 'ok'
  counter = 0
  badSigns = 0

  constructor() {
    super()
    this.handler = (request, response, body) => {
      const fields = Object.fromEntries(new URLSearchParams(body))
      if (request.url !== '/api/payLink' || fields.sign !== requestSign(fields)) {
        this.badSigns++
        response.writeHead(200, { 'content-type': 'application/json' })
        return response.end(JSON.stringify({ status: 'error', code: 40001, data: {}, msg: 'bad sign' }))
      }
      if (this.mode === 'http500') {
        response.writeHead(500)
        return response.end('oops')
      }
      if (this.mode === 'slow') return // never answers
      this.counter++
      const data = this.mode === 'empty' ? { order_id: '', pay_url: '' } : {
        order_id: `P-${this.counter}`,
        pay_url: `https://pay.example/checkout/P-${this.counter}`,
      }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ status: 'success', code: 10000, data, msg: 'ok' }))
    }
  }

  /** Enables the provider channel pointing at this server. */
  async configure() {
    this.mode = 'ok'
    this.requests = []
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
