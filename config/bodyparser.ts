import { defineConfig } from '@adonisjs/core/bodyparser'

/**
 * Bodies are small (an order is a dozen fields): anything past 64 KB is
 * refused with 413 before it is parsed. Values are never trimmed or
 * rewritten, because signatures are computed over them as sent.
 */
const bodyParserConfig = defineConfig({
  allowedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],

  form: {
    limit: '64kb',
    convertEmptyStringsToNull: false,
    trimWhitespaces: false,
    types: ['application/x-www-form-urlencoded'],
    queryString: { comma: false, depth: 5, parameterLimit: 1000 },
  },

  json: {
    limit: '64kb',
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
    limit: '64kb',
    types: ['text/*'],
  },

  multipart: {
    autoProcess: true,
    convertEmptyStringsToNull: false,
    trimWhitespaces: false,
    processManually: [],
    limit: '1mb',
    fieldsLimit: '64kb',
    types: ['multipart/form-data'],
  },
})

export default bodyParserConfig
