import { createHash } from 'node:crypto'
import type { ApiClient } from '@japa/api-client'
import { TEST_SECRET, uniqueOrderId } from '#tests/helpers/merchant'

/** The base URL an EPay SDK is given: it appends submit.php, mapi.php and api.php. */
export const COMPAT_BASE_PATH = '/payments/compat/v1/order/create-transaction/'
export const SUBMIT_PATH = `${COMPAT_BASE_PATH}submit.php`
export const MAPI_PATH = `${COMPAT_BASE_PATH}mapi.php`
export const API_PATH = `${COMPAT_BASE_PATH}api.php`

/**
 * A value as a shop holds it: text (UTF-8), or the bytes of another
 * charset (a GBK shop's name), which PHP signs and sends as they are.
 */
export type EpayValue = string | Buffer

const bytesOf = (value: EpayValue) =>
  typeof value === 'string' ? Buffer.from(value, 'utf8') : value

/**
 * The EPay MD5 sign as a shop computes it (written from the protocol, not
 * with the server's code): sort by name, drop sign, sign_type and empty
 * values, join name=value with &, append the key, MD5 of those bytes.
 */
export function epaySign(params: Record<string, EpayValue | undefined>, secret = TEST_SECRET) {
  const names = Object.keys(params)
    .filter(
      (key) =>
        key !== 'sign' &&
        key !== 'sign_type' &&
        params[key] !== undefined &&
        params[key]!.length > 0
    )
    .sort()
  const parts: Buffer[] = []
  names.forEach((name, index) =>
    parts.push(Buffer.from(`${index > 0 ? '&' : ''}${name}=`), bytesOf(params[name]!))
  )
  parts.push(Buffer.from(secret))
  return createHash('md5').update(Buffer.concat(parts)).digest('hex')
}

/** The compat MD5 sign as an EPay shop plugin computes it. */
export function compatSign(params: Record<string, string>, secret = TEST_SECRET) {
  return epaySign(params, secret)
}

/** `sign` and `sign_type` added as the SDK does (without sign_type when asked). */
export function epaySigned(
  params: Record<string, EpayValue>,
  secret = TEST_SECRET,
  options: { signType?: boolean } = {}
) {
  return {
    ...params,
    sign: epaySign(params, secret),
    ...(options.signType === false ? {} : { sign_type: 'MD5' }),
  }
}

/**
 * PHP's http_build_query of the values' bytes (urlencode: every byte but
 * letters, digits and -_. as %XY, a space as +), so that a GBK value is
 * sent as GBK.
 */
export function epayEncode(params: Record<string, EpayValue>): string {
  const encode = (value: EpayValue) =>
    [...bytesOf(value)]
      .map((byte) => {
        const char = String.fromCharCode(byte)
        if (/[A-Za-z0-9_.-]/.test(char)) return char
        return byte === 0x20 ? '+' : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
      })
      .join('')
  return Object.entries(params)
    .map(([name, value]) => `${encode(name)}=${encode(value)}`)
    .join('&')
}

export type EpayResponse = { status: number; headers: Headers; text: string; body: any }

async function answerOf(response: Response): Promise<EpayResponse> {
  const text = await response.text()
  let body: any = null
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: response.status, headers: response.headers, text, body }
}

/** A request as an SDK sends it (raw: the test client would re-encode values as UTF-8). */
export async function epayRequest(
  path: string,
  options: { query?: string; form?: string; headers?: Record<string, string>; method?: string } = {}
): Promise<EpayResponse> {
  const url = `${process.env.APP_URL}${path}${options.query === undefined ? '' : `?${options.query}`}`
  const response = await fetch(url, {
    method: options.method ?? (options.form === undefined ? 'GET' : 'POST'),
    redirect: 'manual',
    headers: {
      accept: '*/*',
      ...(options.form === undefined
        ? {}
        : { 'content-type': 'application/x-www-form-urlencoded' }),
      ...options.headers,
    },
    body: options.form,
  })
  return answerOf(response)
}

/** The SDK's apiPay: the signed fields posted as a form to mapi.php. */
export function mapiPost(params: Record<string, EpayValue>, headers: Record<string, string> = {}) {
  return epayRequest(MAPI_PATH, { form: epayEncode(params), headers })
}

/**
 * The SDK's order query: `api.php?act=order&pid=…&key=…&trade_no=…`, the
 * query built by concatenation (values not encoded), as EPay SDKs do.
 */
export function queryOrder(
  by: { trade_no?: string; out_trade_no?: string },
  credentials: { pid?: string; key?: string } = {},
  headers: Record<string, string> = {}
) {
  const pid = credentials.pid ?? '1000'
  const key = credentials.key ?? TEST_SECRET
  const which =
    by.trade_no !== undefined ? `trade_no=${by.trade_no}` : `out_trade_no=${by.out_trade_no}`
  return epayRequest(API_PATH, { query: `act=order&pid=${pid}&key=${key}&${which}`, headers })
}

/**
 * A compat order created as a plugin in API mode would (mapi.php), with
 * the compatParams defaults; throws unless it was accepted.
 */
export async function mapiOrder(overrides: Record<string, string | undefined> = {}) {
  const answer = await mapiPost(epaySigned(compatParams(overrides)))
  if (answer.body?.code !== 1) throw new Error(`mapi.php refused: ${answer.text}`)
  return answer.body as { trade_no: string; out_trade_no: string; payurl: string; qrcode?: string }
}

export function compatParams(
  overrides: Record<string, string | undefined> = {}
): Record<string, string> {
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
