import type { ErrorCodeValue } from '#exceptions/error_codes'
import type { HeaderObject, Reference, ResponseObject, SchemaObject } from '#openapi/openapi_types'
import { ref } from '#openapi/schemas'

/**
 * Responses shared by several operations (components.responses and
 * headers), and the builders of each operation's own success and refusal
 * answers.
 */

export const JSON_TYPE = 'application/json'

const header = (name: string): Reference => ({ $ref: `#/components/headers/${name}` })
export const response = (name: string): Reference => ({ $ref: `#/components/responses/${name}` })

export const headers: Record<string, HeaderObject> = {
  RequestId: {
    description:
      'The request identifier, the same as the envelope’s request_id (kept from an incoming X-Request-Id of 8–64 safe characters)',
    required: true,
    schema: { type: 'string', minLength: 1 },
  },
  RetryAfter: {
    description: 'Seconds to wait before trying again',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  Location: {
    description: 'Where to go next',
    required: true,
    schema: { type: 'string', minLength: 1 },
  },
}

/** An envelope whose `status_code` and `data` are narrowed to `properties`. */
function envelopeOf(properties: Record<string, SchemaObject>): SchemaObject {
  return { allOf: [ref('Envelope'), { type: 'object', properties }] }
}

function jsonAnswer(
  description: string,
  schema: SchemaObject,
  extraHeaders: Record<string, Reference> = {}
): ResponseObject {
  return {
    description,
    headers: { 'X-Request-Id': header('RequestId'), ...extraHeaders },
    content: { [JSON_TYPE]: { schema } },
  }
}

/** HTTP 200, `status_code` 200, `data` of the named schema. */
export function success(description: string, dataSchema: string): ResponseObject {
  return jsonAnswer(description, envelopeOf({ status_code: { const: 200 }, data: ref(dataSchema) }))
}

/** A refusal and when it happens. */
export type Refusal = [code: ErrorCodeValue, when: string]

/**
 * The HTTP 400 answer of one operation: exactly the business codes it can
 * answer (the contract test produces each of them), each explained. Only
 * the general code 400 carries `data` (the fields that failed validation,
 * or null); every other code has `data` null.
 */
export function refusals(list: Refusal[]): ResponseObject {
  const codes = list.map(([code]) => code)
  const lines = list.map(([code, when]) => `- \`${code}\`: ${when}`).join('\n')
  const data: SchemaObject = codes.includes(400)
    ? { anyOf: [{ type: 'null' }, ref('ValidationErrors')] }
    : { type: 'null' }
  return jsonAnswer(
    `Refused; \`status_code\` says why:\n\n${lines}`,
    envelopeOf({ status_code: { enum: codes }, data })
  )
}

/** A redirect: Location, and a one-line text naming it. */
export function redirect(description: string): ResponseObject {
  return {
    description,
    headers: { Location: header('Location') },
    content: { 'text/plain': { schema: { type: 'string', pattern: '^Redirecting to ' } } },
  }
}

const refusal = (
  statusCode: number,
  description: string,
  extraHeaders: Record<string, Reference> = {}
) =>
  jsonAnswer(
    description,
    envelopeOf({ status_code: { const: statusCode }, data: { type: 'null' } }),
    extraHeaders
  )

export const responses: Record<string, ResponseObject> = {
  SignatureRefused: refusal(
    401,
    'Signature authentication error (`status_code` 401): a wrong or missing signature, an unknown or disabled pid, or a client IP outside the key’s allow-list, all with the same message. The message says how native requests are signed and over which of the request’s own fields (never the expected value)'
  ),
  BodyTooLarge: refusal(
    413,
    'The body is over 64 KB (`status_code` 413); it is not read to its end and the connection is closed'
  ),
  TooManyRequests: refusal(429, 'Too many requests (`status_code` 429); wait Retry-After seconds', {
    'Retry-After': header('RetryAfter'),
  }),
  DatabaseUnavailable: jsonAnswer(
    'The database cannot be reached now (the envelope’s system error, `status_code` 400); try again after Retry-After seconds, nothing was changed',
    envelopeOf({ status_code: { const: 400 }, data: { type: 'null' } }),
    { 'Retry-After': header('RetryAfter') }
  ),
  NotFound: refusal(
    404,
    'No such route (`status_code` 404), e.g. the former `POST /api/v1/order/create-transaction` and `POST /payments/epusdt/v1/order/create-transaction`'
  ),
}
