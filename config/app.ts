import { randomBytes } from 'node:crypto'
import { defineConfig } from '@adonisjs/core/http'
import env from '#start/env'
import { clientIpOnce } from '#support/http/trust_proxy'

/**
 * HTTP server settings.
 *
 * Request ids: a client-supplied X-Request-Id is kept only when it looks
 * like an id (see request_id_middleware); otherwise one is generated here.
 *
 * Client address (request.ip()): X-Forwarded-For is believed only from the
 * proxies TRUST_PROXY names (default: loopback), see app/support/http/trust_proxy.ts.
 */
export const http = defineConfig({
  trustProxy: env.get('TRUST_PROXY'),
  getIp: clientIpOnce,
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
