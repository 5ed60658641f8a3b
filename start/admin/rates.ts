/*
| The console's "rates" page (registered inside the signed-in group of
| start/admin/index.ts: paths here are relative to ADMIN_PATH). Viewers
| may look; setting or clearing a markup needs an admin.
*/
import router from '@adonisjs/core/services/router'

const RatesController = () => import('#controllers/admin/rates_controller')

export function ratesRoutes() {
  router.get('/rates', [RatesController, 'index'])
  router.post('/rates/markup', [RatesController, 'markup'])
}
