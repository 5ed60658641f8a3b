import { randomBytes } from 'node:crypto'

/**
 * A new trade_id: 128 random bits, base64url (22 URL-safe characters).
 * It is the only key to the public cashier endpoints, so it must not be
 * guessable or sequential.
 */
export function newTradeId(): string {
  return randomBytes(16).toString('base64url')
}
