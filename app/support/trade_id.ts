import { randomBytes } from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const LENGTH = 22
/** Largest multiple of 62 below 256: bytes above it are rejected (no bias). */
const UNBIASED_LIMIT = 248

/**
 * A new trade_id: 22 random alphanumeric characters (131 bits). It is the
 * only key to the public cashier endpoints, so it must not be guessable or
 * sequential; letters and digits only, so it is safe in URLs, shells and
 * command lines (it never starts with "-").
 */
export function newTradeId(): string {
  let id = ''
  while (id.length < LENGTH) {
    for (const byte of randomBytes(32)) {
      if (byte >= UNBIASED_LIMIT) continue
      id += ALPHABET[byte % ALPHABET.length]
      if (id.length === LENGTH) break
    }
  }
  return id
}
