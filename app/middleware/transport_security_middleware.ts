import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { HSTS_VALUE, servedOverHttps, withSecureFlag } from '#support/http/transport_security'

/**
 * Every response of an installation served over HTTPS (APP_URL https, or a
 * trusted proxy's X-Forwarded-Proto: https) carries HSTS, the merchant API,
 * the cashier, static files and error answers included, and every cookie
 * it sets is Secure (the console's session cookie behind a TLS proxy
 * whose APP_URL is not known to be https). Server middleware: it runs for
 * every request, matched by a route or not, and after an error too.
 */
export default class TransportSecurityMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    const https = servedOverHttps(ctx.request)
    if (https) ctx.response.header('strict-transport-security', HSTS_VALUE)
    await next()
    if (!https) return
    const cookies = ctx.response.getHeader('set-cookie')
    if (cookies === undefined) return
    const lines = (Array.isArray(cookies) ? cookies : [cookies]).map((line) =>
      withSecureFlag(String(line))
    )
    ctx.response.header('set-cookie', lines)
  }
}
