/*
|--------------------------------------------------------------------------
| The admin console's routes, under ADMIN_PATH (default /admin)
|--------------------------------------------------------------------------
|
| Every console route runs the console's headers (CSP, no framing, no
| referrer, no-store), a database session, shield's CSRF check on every
| POST and the session guard. Past sign-in, consoleAuth checks the session
| (idle timeout, password changes), refuses a viewer's writes with 403 and
| names the user in the audit log. Each area registers its routes in its own
| file here, inside the signed-in group.
*/
import router from '@adonisjs/core/services/router'
import { middleware } from '#start/kernel'
import { adminPath } from '#console/console_paths'
import { dashboardRoutes } from '#start/console/dashboard'
import { ordersRoutes } from '#start/console/orders'
import { apiKeysRoutes } from '#start/console/api_keys'
import { chainsRoutes } from '#start/console/chains'
import { walletsRoutes } from '#start/console/wallets'
import { settingsRoutes } from '#start/console/settings'
import { notificationsRoutes } from '#start/console/notifications'
import { callbacksRoutes } from '#start/console/callbacks'
import { unmatchedRoutes } from '#start/console/unmatched'
import { auditRoutes } from '#start/console/audit'
import { usersRoutes } from '#start/console/users'
import { ratesRoutes } from '#start/console/rates'

const SessionController = () => import('#controllers/console/session_controller')
const AccountController = () => import('#controllers/console/account_controller')

export function registerConsoleRoutes() {
  router
    .group(() => {
      router.get('/login', [SessionController, 'showLogin']).as('console.login')
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
        .use(middleware.consoleAuth({ ownAccount: true, enrolment: true }))
      router
        .group(() => {
          router.post('/account/password', [AccountController, 'changePassword'])
          router.post('/account/2fa/disable', [AccountController, 'disableTwoFactor'])
        })
        .use(middleware.consoleAuth({ ownAccount: true }))

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
        .use(middleware.consoleAuth())
    })
    .prefix(adminPath)
    .use([
      middleware.consoleHeaders(),
      middleware.session(),
      middleware.shield(),
      middleware.initializeAuth(),
    ])
}
