import type { HttpRequest } from '@adonisjs/core/http'
import env from '#start/env'

/** HSTS lifetime: 180 days, as the console had it from shield. */
export const HSTS_VALUE = 'max-age=15552000'

/**
 * Whether this installation is served over HTTPS for this request: its
 * public address (APP_URL) is https, or the request came over TLS, or a
 * proxy that TRUST_PROXY trusts says so (X-Forwarded-Proto: https).
 * request.secure() believes the header only from a trusted hop.
 */
export function servedOverHttps(request: HttpRequest): boolean {
  if (env.get('APP_URL', '').toLowerCase().startsWith('https://')) return true
  try {
    return request.secure()
  } catch {
    // A socket already closed knows no peer address: not provably https.
    return false
  }
}

/** A Set-Cookie line with the Secure attribute (unchanged when it has it). */
export function withSecureFlag(line: string): string {
  return /;\s*secure\s*(;|$)/i.test(line) ? line : `${line}; Secure`
}
