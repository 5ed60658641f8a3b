import { defineConfig } from '@adonisjs/shield'

/**
 * Shield runs on the console's routes only. CSRF on every form; the
 * Content-Security-Policy is written by the console's headers middleware
 * (app/middleware/admin_headers_middleware.ts) with a per-response nonce,
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
  // HSTS is set on every response, not only the console's, by
  // app/middleware/transport_security_middleware.ts.
  hsts: { enabled: false },
  contentTypeSniffing: { enabled: true },
})

export default shieldConfig
