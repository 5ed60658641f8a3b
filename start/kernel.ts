/*
|--------------------------------------------------------------------------
| HTTP kernel
|--------------------------------------------------------------------------
*/
import router from '@adonisjs/core/services/router'
import server from '@adonisjs/core/services/server'

server.errorHandler(() => import('#exceptions/handler'))

server.use([
  () => import('#middleware/request_id_middleware'),
  // HSTS and Secure cookies whenever the installation is served over HTTPS.
  () => import('#middleware/transport_security_middleware'),
  () => import('#middleware/body_limit_middleware'),
  // public/assets: the cashier's stylesheet and script
  () => import('@adonisjs/static/static_middleware'),
])

router.use([() => import('@adonisjs/core/bodyparser_middleware')])

export const middleware = router.named({
  throttle: () => import('#middleware/throttle_middleware'),
  multipartFields: () => import('#middleware/multipart_fields_middleware'),
  // The admin console's stack (start/admin/index.ts): the merchant API and
  // the cashier stay free of sessions and CSRF.
  adminHeaders: () => import('#middleware/admin_headers_middleware'),
  session: () => import('@adonisjs/session/session_middleware'),
  shield: () => import('@adonisjs/shield/shield_middleware'),
  initializeAuth: () => import('@adonisjs/auth/initialize_auth_middleware'),
  adminAuth: () => import('#middleware/admin_auth_middleware'),
})
