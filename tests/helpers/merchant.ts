import { createHmac } from 'node:crypto'
import type { ApiClient } from '@japa/api-client'

/** Secret of PID 1000 in tests (INITIAL_API_SECRET set by bin/test.ts). */
export const TEST_SECRET = 'test-secret-0123456789abcdef'
export const CREATE_PATH = '/payments/native/v1/order/create-transaction'

export const TRON_WALLET = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf'
export const TRON_WALLET_2 = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'

/**
 * The native signature as a merchant computes it from the spec, written
 * independently of the server's code so that the two check each other.
 */
export function merchantSign(params: Record<string, unknown>, secret = TEST_SECRET): string {
  const message = Object.keys(params)
    .filter(
      (key) =>
        key !== 'signature' &&
        params[key] !== '' &&
        params[key] !== null &&
        params[key] !== undefined
    )
    .sort()
    .map((key) => `${key}=${String(params[key])}`)
    .join('&')
  return createHmac('sha256', secret).update(message).digest('hex')
}

let counter = 0
export function uniqueOrderId(prefix = 'ord') {
  counter += 1
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`
}

export function orderParams(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const params: Record<string, unknown> = {
    pid: '1000',
    order_id: uniqueOrderId(),
    currency: 'cny',
    amount: 100,
    token: 'usdt',
    network: 'tron',
    notify_url: 'http://127.0.0.1:9/notify',
    ...overrides,
  }
  for (const key of Object.keys(params)) if (params[key] === undefined) delete params[key]
  return params
}

export function signed(params: Record<string, unknown>, secret = TEST_SECRET) {
  return { ...params, signature: merchantSign(params, secret) }
}

/** POSTs a signed JSON create request. */
export function createOrder(
  client: ApiClient,
  params: Record<string, unknown>,
  secret = TEST_SECRET
) {
  return client.post(CREATE_PATH).json(signed(params, secret)).accept('json')
}

/** POSTs a signed form-encoded create request (values as strings). */
export function createOrderForm(
  client: ApiClient,
  params: Record<string, unknown>,
  secret = TEST_SECRET
) {
  const fields: Record<string, string> = {}
  for (const [key, value] of Object.entries(signed(params, secret))) fields[key] = String(value)
  return client.post(CREATE_PATH).form(fields).accept('json')
}

/** Sends a raw body with Node's fetch (the API client re-encodes bodies). */
export async function rawPost(path: string, body: string, contentType: string) {
  const response = await fetch(`${process.env.APP_URL}${path}`, {
    method: 'POST',
    headers: { 'content-type': contentType, 'accept': 'application/json' },
    body,
  })
  return {
    status: response.status,
    body: (await response.json()) as any,
    headers: response.headers,
  }
}

/** How a merchant checks a native callback: the same HMAC over the fields received. */
export function merchantVerifiesCallback(
  body: Record<string, unknown>,
  secret = TEST_SECRET
): boolean {
  return typeof body.signature === 'string' && merchantSign(body, secret) === body.signature
}
