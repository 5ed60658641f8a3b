import { createHash } from 'node:crypto'
import type { ApiClient } from '@japa/api-client'
import { TEST_SECRET, uniqueOrderId } from '#tests/helpers/merchant'

export const SUBMIT_PATH = '/payments/compat/v1/order/create-transaction/submit.php'

/** The compat MD5 sign as an EPay shop plugin computes it. */
export function compatSign(params: Record<string, string>, secret = TEST_SECRET) {
  const text = Object.keys(params)
    .filter((key) => key !== 'sign' && key !== 'sign_type' && params[key] !== '' && params[key] !== undefined)
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&')
  return createHash('md5').update(text + secret).digest('hex')
}

export function compatParams(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const params: Record<string, string | undefined> = {
    pid: '1000',
    money: '100.00',
    out_trade_no: uniqueOrderId('epay'),
    notify_url: 'http://127.0.0.1:9/epay-notify',
    return_url: 'https://shop.example/return',
    name: 'Order from shop',
    ...overrides,
  }
  const clean: Record<string, string> = {}
  for (const [key, value] of Object.entries(params)) if (value !== undefined) clean[key] = value
  return clean
}

export function compatSigned(params: Record<string, string>, secret = TEST_SECRET) {
  return { ...params, sign: compatSign(params, secret), sign_type: 'MD5' }
}

export function submitGet(client: ApiClient, params: Record<string, string>) {
  return client.get(SUBMIT_PATH).qs(params).redirects(0).accept('json')
}

export function submitPost(client: ApiClient, params: Record<string, string>) {
  return client.post(SUBMIT_PATH).form(params).redirects(0).accept('json')
}

export function tradeIdFromLocation(location: string | undefined) {
  const match = /^\/pay\/checkout-counter\/([A-Za-z0-9]+)$/.exec(location ?? '')
  if (!match) throw new Error(`unexpected Location: ${location}`)
  return match[1]
}
