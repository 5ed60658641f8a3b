import { createHash } from 'node:crypto'
import type { HttpContext } from '@adonisjs/core/http'
import env from '#start/env'
import { openApiDocument } from '#openapi/document'

/** Browsers and proxies may keep the document this long; the ETag revalidates it after. */
const MAX_AGE_SECONDS = 300

/** The serialised document and its ETag, per base URL (APP_URL is read on every request). */
const rendered = new Map<string, { body: string; etag: string }>()

function render(baseUrl: string) {
  let entry = rendered.get(baseUrl)
  if (!entry) {
    const body = JSON.stringify(openApiDocument(baseUrl))
    entry = {
      body,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`,
    }
    rendered.set(baseUrl, entry)
  }
  return entry
}

/** Whether an If-None-Match header names `etag` (a list, weak forms or `*`). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  return ifNoneMatch.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '')
    return tag === '*' || tag === etag
  })
}

export default class OpenApiController {
  /** GET /payments/native/v1/openapi.json: no signature, cacheable. */
  async show({ request, response }: HttpContext) {
    const { body, etag } = render(String(env.get('APP_URL')))
    response.header('Cache-Control', `public, max-age=${MAX_AGE_SECONDS}`)
    response.header('ETag', etag)
    if (matches(request.header('if-none-match'), etag)) return response.status(304).send('')
    response.header('Content-Type', 'application/json; charset=utf-8')
    return response.status(200).send(body)
  }
}
