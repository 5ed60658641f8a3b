import { randomBytes } from 'node:crypto'
import type { HttpContext } from '@adonisjs/core/http'

/**
 * Headers of every cashier HTML page. The CSP allows no inline script: the
 * page's one script is a file of our own (script-src 'self'); the only
 * inline style is the operator's background, under a per-response nonce.
 * Returns that nonce.
 */
export function setCashierHeaders({ response }: HttpContext): string {
  const nonce = randomBytes(16).toString('base64')
  response.header(
    'content-security-policy',
    [
      "default-src 'none'",
      "script-src 'self'",
      `style-src 'self' 'nonce-${nonce}'`,
      "img-src 'self' data: https: http:",
      "connect-src 'self'",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; ')
  )
  // The trade_id in the URL is the key to the order: never leak it.
  response.header('referrer-policy', 'no-referrer')
  response.header('x-content-type-options', 'nosniff')
  // Status and amount change: never show a stale copy.
  response.header('cache-control', 'no-store')
  return nonce
}
