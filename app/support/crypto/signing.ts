import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Signature primitives shared by the native (HMAC-SHA256) and plugin (MD5)
 * flavours. Parameters are a flat map of names to the text that was signed.
 */
export type SignableParams = Record<string, string | null | undefined>

/**
 * `name=value` pairs of every non-empty parameter except `excluded`,
 * sorted by name in byte (ASCII) order, joined with `&`. Values are used
 * as sent: no URL encoding, no trimming.
 */
export function canonicalString(params: SignableParams, excluded: readonly string[]): string {
  return Object.keys(params)
    .filter((name) => !excluded.includes(name))
    .filter((name) => {
      const value = params[name]
      return value !== null && value !== undefined && value !== ''
    })
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => `${name}=${params[name]}`)
    .join('&')
}

/**
 * A JSON number as it takes part in a signature: the server's numeric
 * format, which is how the number prints in JSON (`100.00` sent as a JSON
 * number is the number 100 and signs as "100"; 13.8 as "13.8"). The native
 * request check (numbers a merchant sent) and the native callback (numbers
 * we send) both use it, so what is signed is exactly what is printed.
 * Amounts stay within MAX_SIGNIFICANT_DIGITS, so their text is the decimal.
 */
export function signedNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`)
  return JSON.stringify(value)
}

export function hmacSha256Hex(key: string, message: string): string {
  return createHmac('sha256', key).update(message, 'utf8').digest('hex')
}

export function md5Hex(message: string): string {
  return createHash('md5').update(message, 'utf8').digest('hex')
}

/**
 * Constant-time comparison of two hex digests, case-insensitive. Returns
 * false for anything that is not hex of the expected length.
 */
export function hexDigestsEqual(expectedHex: string, givenHex: unknown): boolean {
  if (typeof givenHex !== 'string' || givenHex.length !== expectedHex.length) return false
  if (!/^[0-9a-fA-F]+$/.test(givenHex)) return false
  return timingSafeEqual(
    Buffer.from(expectedHex.toLowerCase(), 'hex'),
    Buffer.from(givenHex.toLowerCase(), 'hex')
  )
}

/** Native signature: HMAC-SHA256 over the canonical string, lower-case hex. */
export function nativeSignature(params: SignableParams, secretKey: string): string {
  return hmacSha256Hex(secretKey, canonicalString(params, ['signature']))
}
