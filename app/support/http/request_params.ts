import type { HttpContext } from '@adonisjs/core/http'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { signedNumber } from '#support/crypto/signing'

/** Request parameters as the flat text map that signatures are computed on. */
export type FlatParams = Record<string, string | null>

const unparsable = (reason: string) =>
  new BusinessError(ErrorCode.UNPARSABLE, `Parameters cannot be parsed: ${reason}`)

/**
 * JSON scalar → the text the server signs: strings as sent, numbers in the
 * server's numeric format (JSON `100.00` is the number 100 and signs as
 * "100"), booleans as true/false, null as null (dropped from signatures).
 */
function jsonScalarToText(name: string, value: unknown): string | null {
  if (value === null) return null
  if (typeof value === 'string') return value
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw unparsable(`"${name}" is not a finite number`)
    return signedNumber(value)
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  throw unparsable(
    `"${name}" must be a string or a number, not an ${Array.isArray(value) ? 'array' : 'object'}`
  )
}

function fromSearchParams(search: URLSearchParams): FlatParams {
  const params: FlatParams = {}
  for (const name of new Set(search.keys())) {
    const values = search.getAll(name)
    if (values.length > 1) throw unparsable(`"${name}" is given more than once`)
    params[name] = values[0]
  }
  return params
}

/**
 * Reads the parameters of a request exactly as the client sent them:
 * - GET: the query string;
 * - JSON body: a flat object of scalars;
 * - form body (urlencoded, or multipart where the route parses it): its
 *   fields, as text.
 * Values are never trimmed or converted: they are what was signed.
 */
export function readFlatParams(ctx: HttpContext): FlatParams {
  const { request } = ctx
  if (request.method() === 'GET' || request.method() === 'HEAD') {
    return fromSearchParams(new URLSearchParams(request.parsedUrl.query ?? ''))
  }

  if (request.is(['json', '+json']) !== null) {
    const raw = request.raw()
    if (raw === null || raw.trim() === '') return {}
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      throw unparsable('the body is not valid JSON')
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw unparsable('the JSON body must be an object')
    }
    const params: FlatParams = {}
    for (const [name, value] of Object.entries(parsed)) params[name] = jsonScalarToText(name, value)
    return params
  }

  if (request.is(['urlencoded']) !== null) {
    return fromSearchParams(new URLSearchParams(request.raw() ?? ''))
  }

  if (request.is(['multipart']) !== null) {
    // Parsed only on the routes that accept multipart (config/bodyparser.ts);
    // elsewhere such a body is left unread.
    if (request.multipart?.state !== 'success') {
      throw unparsable(
        'multipart/form-data is not accepted here: send JSON or application/x-www-form-urlencoded'
      )
    }
    const params: FlatParams = {}
    for (const [name, value] of Object.entries(request.body())) {
      if (typeof value !== 'string') throw unparsable(`"${name}" must be a plain text field`)
      params[name] = value
    }
    return params
  }

  return {}
}

/** The parameters with empty strings and nulls removed (as signatures do). */
export function withoutEmpty(params: FlatParams): Record<string, string> {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== '') kept[name] = value
  }
  return kept
}
