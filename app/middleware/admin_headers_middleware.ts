import { randomBytes } from 'node:crypto'
import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { adminPath, adminUrl } from '#admin/admin_paths'
import { assetUrl } from '#admin/admin_assets'
import { utcMinute, utcSecond } from '#services/admin/admin_format'
import { applyAdminLocale } from '#admin/admin_locale'

/**
 * Headers of every console response, the error pages included: a CSP
 * without inline script (scripts are our own files; the only inline style
 * is a nonce'd block a page may need, e.g. the branding preview), no
 * framing, no referrer, never cached. Shares with the views what the
 * layout needs.
 */
export default class AdminHeadersMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    applyAdminHeaders(ctx)
    return next()
  }
}

const applied = new WeakSet<HttpContext>()

/** Sets the console's headers and view data once per request (the error pages call it too). */
export function applyAdminHeaders(ctx: HttpContext) {
  if (applied.has(ctx)) return
  applied.add(ctx)
  const nonce = randomBytes(16).toString('base64')
  ctx.response.header(
    'content-security-policy',
    [
      "default-src 'none'",
      "script-src 'self'",
      `style-src 'self' 'nonce-${nonce}'`,
      // Logos of the cashier's branding may live on another host (preview).
      "img-src 'self' data: https:",
      "connect-src 'self'",
      "form-action 'self'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; ')
  )
  ctx.response.header('referrer-policy', 'no-referrer')
  ctx.response.header('x-content-type-options', 'nosniff')
  ctx.response.header('x-frame-options', 'DENY')
  ctx.response.header('cache-control', 'no-store')
  ctx.response.header('x-robots-tag', 'noindex, nofollow')
  ctx.view.share({
    cspNonce: nonce,
    adminPath,
    adminUrl,
    assetUrl,
    utcMinute,
    utcSecond,
    currentUrl: ctx.request.url(true),
    currentPath: ctx.request.url(false),
  })
  // The browser's language until the signed-in admin's own choice (adminAuth).
  applyAdminLocale(ctx)
}
