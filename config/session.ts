import env from '#start/env'
import { defineConfig, stores } from '@adonisjs/session'

/**
 * Sessions exist only for the admin console (the merchant API and the
 * cashier are stateless): the session middleware runs on the console's
 * routes alone. Stored in the database (the `sessions` table), so signing
 * out or a password change ends them on the server, not just in a cookie.
 */
const sessionConfig = defineConfig({
  enabled: true,
  cookieName: 'gateway_console',
  clearWithBrowser: true,
  // The store's own expiry; the console's idle timeout (ADMIN_IDLE_MINUTES,
  // app/middleware/admin_auth_middleware.ts) is checked on every request.
  age: '12h',
  cookie: {
    path: env.get('ADMIN_PATH'),
    httpOnly: true,
    sameSite: 'lax',
    secure: env.get('APP_URL', '').startsWith('https://'),
  },
  store: 'database',
  stores: {
    database: stores.database({ tableName: 'sessions', gcProbability: 2 }),
  },
})

export default sessionConfig
