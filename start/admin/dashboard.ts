/*
| The console's home page, the dashboard (registered inside the signed-in
| group of start/admin/index.ts: paths here are relative to ADMIN_PATH).
*/
import router from '@adonisjs/core/services/router'

const DashboardController = () => import('#controllers/admin/dashboard_controller')

export function dashboardRoutes() {
  router.get('/', [DashboardController, 'show'])
}
