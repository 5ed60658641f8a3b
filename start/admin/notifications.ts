/*
| The console's "notifications" page (registered inside the signed-in group
| of start/admin/index.ts: paths here are relative to ADMIN_PATH). Like
| the settings pages, viewers may look; every POST needs an admin.
*/
import router from '@adonisjs/core/services/router'

const NotificationsController = () => import('#controllers/admin/notifications_controller')

export function notificationsRoutes() {
  router.get('/notifications', [NotificationsController, 'index'])
  router.post('/notifications/settings', [NotificationsController, 'saveGlobal'])
  router.post('/notifications/targets/:id/resume', [NotificationsController, 'resume'])
  router.post('/notifications/:channel/settings', [NotificationsController, 'saveChannel'])
  router.post('/notifications/:channel/test', [NotificationsController, 'sendTest'])
}
