/*
|--------------------------------------------------------------------------
| The admin console's routes, under ADMIN_PATH (default /admin)
|--------------------------------------------------------------------------
|
| Every console route runs the console's headers (CSP, no framing, no
| referrer, no-store), a database session, shield's CSRF check on every
| POST and the session guard. Past sign-in, adminAuth checks the session
| (idle timeout, password changes), refuses a viewer's writes with 403 and
| names the user in the audit log. Each area registers its routes in its own
| file here, inside the signed-in group.
*/
import router from '@adonisjs/core/services/router'
import { middleware } from '#start/kernel'
import { adminPath } from '#admin/admin_paths'
import { dashboardRoutes } from '#start/admin/dashboard'
import { ordersRoutes } from '#start/admin/orders'
import { apiKeysRoutes } from '#start/admin/api_keys'
import { chainsRoutes } from '#start/admin/chains'
import { walletsRoutes } from '#start/admin/wallets'
import { settingsRoutes } from '#start/admin/settings'
import { notificationsRoutes } from '#start/admin/notifications'
import { callbacksRoutes } from '#start/admin/callbacks'
import { unmatchedRoutes } from '#start/admin/unmatched'
import { auditRoutes } from '#start/admin/audit'
import { usersRoutes } from '#start/admin/users'
import { ratesRoutes } from '#start/admin/rates'

const SessionController = () => import('#controllers/admin/session_controller')
const AccountController = () => import('#controllers/admin/account_controller')

export function registerAdminRoutes() {
  router
    .group(() => {
      router.get('/login', [SessionController, 'showLogin']).as('admin.login')
      router.post('/login', [SessionController, 'login'])
      router.get('/login/2fa', [SessionController, 'showSecondFactor'])
      router.post('/login/2fa', [SessionController, 'secondFactor'])

      // The signed-in user's own account: viewers may change these too. The
      // first group stays open to an admin who still owes the 2FA set-up
      // the setting console.require_2fa_admins asks for.
      router
        .group(() => {
          router.post('/logout', [SessionController, 'logout'])
          router.get('/account', [AccountController, 'show'])
          router.post('/account/locale', [AccountController, 'changeLocale'])
          router.post('/account/2fa/start', [AccountController, 'startTwoFactor'])
          router.get('/account/2fa', [AccountController, 'showEnrolment'])
          router.post('/account/2fa/confirm', [AccountController, 'confirmTwoFactor'])
        })
        .use(middleware.adminAuth({ ownAccount: true, enrolment: true }))
      router
        .group(() => {
          router.post('/account/password', [AccountController, 'changePassword'])
          router.post('/account/2fa/disable', [AccountController, 'disableTwoFactor'])
        })
        .use(middleware.adminAuth({ ownAccount: true }))

      router
        .group(() => {
          dashboardRoutes()
          ordersRoutes()
          apiKeysRoutes()
          chainsRoutes()
          walletsRoutes()
          settingsRoutes()
          notificationsRoutes()
          callbacksRoutes()
          unmatchedRoutes()
          auditRoutes()
          usersRoutes()
          ratesRoutes()
        })
        .use(middleware.adminAuth())
    })
    .prefix(adminPath)
    .use([
      middleware.adminHeaders(),
      middleware.session(),
      middleware.shield(),
      middleware.initializeAuth(),
    ])
}
