/*
| The console's home page (registered inside the signed-in group of
| start/console/index.ts: paths here are relative to ADMIN_PATH).
*/
import router from '@adonisjs/core/services/router'

const HomeController = () => import('#controllers/console/home_controller')

export function dashboardRoutes() {
  router.get('/', [HomeController, 'show'])
}
