import { defineConfig } from '@adonisjs/core/bodyparser'

/**
 * Bodies are small (an order is a dozen fields): anything past 64 KB is
 * refused with 413, whatever its type, and is not read to its end
 * (app/middleware/body_limit_middleware.ts). Values are never trimmed or
 * rewritten, because signatures are computed over them as sent.
 */
export const BODY_LIMIT_BYTES = 64 * 1024

const bodyParserConfig = defineConfig({
  allowedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],

  form: {
    limit: BODY_LIMIT_BYTES,
    convertEmptyStringsToNull: false,
    trimWhitespaces: false,
    types: ['application/x-www-form-urlencoded'],
    queryString: { comma: false, depth: 5, parameterLimit: 1000 },
  },

  json: {
    limit: BODY_LIMIT_BYTES,
    strict: true,
    convertEmptyStringsToNull: false,
    trimWhitespaces: false,
    types: [
      'application/json',
      'application/json-patch+json',
      'application/vnd.api+json',
      'application/csp-report',
    ],
  },

  raw: {
    limit: BODY_LIMIT_BYTES,
    types: ['text/*'],
  },

  // Multipart is parsed only on the routes that accept it (the provider
  // notification), by app/middleware/multipart_fields_middleware.ts; other
  // routes answer 10009 without reading such a body.
  multipart: {
    autoProcess: false,
    convertEmptyStringsToNull: false,
    trimWhitespaces: false,
    processManually: [],
    limit: BODY_LIMIT_BYTES,
    fieldsLimit: BODY_LIMIT_BYTES,
    types: ['multipart/form-data'],
  },
})

export default bodyParserConfig
