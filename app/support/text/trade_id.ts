import { randomFillSync } from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const LENGTH = 22
/** Largest multiple of 62 below 256: bytes above it are rejected (no bias). */
const UNBIASED_LIMIT = 248

/**
 * Random bytes drawn from the system's CSPRNG 4 KiB at a time (one call per
 * ~170 ids instead of one per id: the call, not the bytes, is what costs),
 * each byte used once.
 */
const pool = Buffer.alloc(4096)
let position = pool.length

function nextByte(): number {
  if (position === pool.length) {
    randomFillSync(pool)
    position = 0
  }
  return pool[position++]
}

/**
 * A new trade_id: 22 random alphanumeric characters (131 bits). It is the
 * only key to the public cashier endpoints, so it must not be guessable or
 * sequential; letters and digits only, so it is safe in URLs, shells and
 * command lines (it never starts with "-").
 */
export function newTradeId(): string {
  let id = ''
  while (id.length < LENGTH) {
    const byte = nextByte()
    if (byte < UNBIASED_LIMIT) id += ALPHABET[byte % ALPHABET.length]
  }
  return id
}
