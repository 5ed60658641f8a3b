import { defineConfig } from '@adonisjs/shield'
import env from '#start/env'

/**
 * Shield runs on the console's routes only. CSRF on every form; the
 * Content-Security-Policy is written by the console's headers middleware
 * (app/middleware/console_headers_middleware.ts) with a per-response nonce,
 * so shield's own CSP stays off.
 */
const shieldConfig = defineConfig({
  csp: { enabled: false, directives: {}, reportOnly: false },
  csrf: {
    enabled: true,
    exceptRoutes: [],
    enableXsrfCookie: false,
    methods: ['POST', 'PUT', 'PATCH', 'DELETE'],
  },
  xFrame: { enabled: true, action: 'DENY' },
  hsts: { enabled: env.get('APP_URL', '').startsWith('https://'), maxAge: '180 days' },
  contentTypeSniffing: { enabled: true },
})

export default shieldConfig
