import type { HttpContext } from '@adonisjs/core/http'
import logger from '@adonisjs/core/services/logger'
import providerCheckout from '#payments/provider_checkout'
import { HOSTED_PROVIDER_NAME } from '#plugins/provider/hosted_provider'
import { NotificationRejectedError } from '#payments/payment_provider'
import { BODY_LIMIT_BYTES, bodyTooLarge } from '#support/http/body_limit'

/** Nested objects become bracketed names: {data: {amount: 1}} → data[amount]. */
function flatten(value: unknown, prefix: string, into: Record<string, string>) {
  if (value === null || value === undefined) return
  if (typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value))
      flatten(inner, prefix ? `${prefix}[${key}]` : key, into)
    return
  }
  into[prefix] = Array.isArray(value) ? value.map(String).join(',') : String(value)
}

/** A body of a type the body parser leaves alone, read up to the limit (413 past it). */
async function readStream(ctx: HttpContext, limit = BODY_LIMIT_BYTES): Promise<string> {
  const stream = ctx.request.request
  if (stream.readableEnded || stream.complete) return ''
  let size = 0
  const chunks: Buffer[] = []
  for await (const chunk of stream) {
    size += chunk.length
    if (size > limit) throw bodyTooLarge()
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * POST /payments/provider/v1/notify: the hosted provider reports a payment.
 * Bodies come as JSON, urlencoded or multipart forms, or a raw query
 * string. Answers plain `success` once the order is paid (also for a
 * repeat), HTTP 400 `fail` otherwise.
 */
export default class ProviderNotifyController {
  async notify(ctx: HttpContext) {
    const { fields, raw } = await this.#read(ctx)
    try {
      await providerCheckout.handleNotification(HOSTED_PROVIDER_NAME, fields, raw)
    } catch (error) {
      if (!(error instanceof NotificationRejectedError)) throw error
      ctx.logger.warn(
        { reason: error.message, unique_id: fields['data[unique_id]'] },
        'provider notification refused'
      )
      return ctx.response
        .status(400)
        .header('content-type', 'text/plain; charset=utf-8')
        .send('fail')
    }
    ctx.logger.info({ unique_id: fields['data[unique_id]'] }, 'provider notification accepted')
    return ctx.response
      .status(200)
      .header('content-type', 'text/plain; charset=utf-8')
      .send('success')
  }

  async #read(ctx: HttpContext): Promise<{ fields: Record<string, string>; raw: string }> {
    const { request } = ctx
    const fields: Record<string, string> = {}
    if (request.is(['json', '+json'])) {
      const raw = request.raw() ?? ''
      try {
        flatten(JSON.parse(raw), '', fields)
      } catch {
        logger.warn('provider notification: body is not JSON')
      }
      return { fields, raw }
    }
    if (request.is(['multipart'])) {
      flatten(request.body(), '', fields)
      return { fields, raw: JSON.stringify(request.body()) }
    }
    // urlencoded, text/plain or no content type: a query string
    const raw = request.raw() ?? (await readStream(ctx))
    for (const [name, value] of new URLSearchParams(raw.trim())) fields[name] = value
    return { fields, raw }
  }
}
