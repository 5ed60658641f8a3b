import { randomBytes } from 'node:crypto'
import { defineConfig } from '@adonisjs/core/http'

/**
 * HTTP server settings.
 *
 * Request ids: a client-supplied X-Request-Id is kept only when it looks
 * like an id (see request_id_middleware); otherwise one is generated here.
 */
export const http = defineConfig({
  generateRequestId: true,
  createRequestId: () => randomBytes(12).toString('base64url'),
  allowMethodSpoofing: false,
  useAsyncLocalStorage: true,
  cookie: {
    domain: '',
    path: '/',
    maxAge: '2h',
    httpOnly: true,
    secure: false,
    sameSite: 'lax',
  },
  qs: {
    parse: {
      // `a=1,2` must stay the string "1,2": signatures are computed over it.
      comma: false,
      depth: 5,
      parameterLimit: 1000,
      allowSparse: false,
      arrayLimit: 20,
    },
    stringify: {
      encode: true,
      encodeValuesOnly: false,
      arrayFormat: 'indices',
      skipNulls: false,
    },
  },
})
