/*
| The console's "unmatched" pages (registered inside the signed-in group of
| start/admin/index.ts: paths here are relative to ADMIN_PATH).
*/
import router from '@adonisjs/core/services/router'

const UnmatchedController = () => import('#controllers/admin/unmatched_controller')

export function unmatchedRoutes() {
  router.get('/unmatched', [UnmatchedController, 'index'])
  router.get('/unmatched/:id', [UnmatchedController, 'show'])
  router.post('/unmatched/:id/assign', [UnmatchedController, 'assign'])
  router.post('/unmatched/:id/dismiss', [UnmatchedController, 'dismiss'])
}
