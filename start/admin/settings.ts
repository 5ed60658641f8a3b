/*
| The console's "settings" pages (registered inside the signed-in group of
| start/admin/index.ts: paths here are relative to ADMIN_PATH).
*/
import router from '@adonisjs/core/services/router'

const SettingsController = () => import('#controllers/admin/settings_controller')

export function settingsRoutes() {
  router.get('/settings', [SettingsController, 'index'])
  router.post('/settings/rates/fixed', [SettingsController, 'setRate'])
  router.get('/settings/:group', [SettingsController, 'show'])
  router.post('/settings/:group', [SettingsController, 'save'])
}
