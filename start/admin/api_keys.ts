/*
| The console's "api_keys" pages (registered inside the signed-in group of
| start/admin/index.ts: paths here are relative to ADMIN_PATH).
*/
import router from '@adonisjs/core/services/router'

const ApiKeysController = () => import('#controllers/admin/api_keys_controller')

/** A pid as keys have them (letters, digits, _ and -), so /api-keys/new is never a pid. */
const PID = /^[A-Za-z0-9_-]{1,32}$/

export function apiKeysRoutes() {
  router.get('/api-keys', [ApiKeysController, 'index'])
  router.get('/api-keys/new', [ApiKeysController, 'create'])
  router.post('/api-keys', [ApiKeysController, 'store'])
  router.get('/api-keys/:pid', [ApiKeysController, 'show']).where('pid', PID)
  router.post('/api-keys/:pid', [ApiKeysController, 'update']).where('pid', PID)
  router.post('/api-keys/:pid/enable', [ApiKeysController, 'enable']).where('pid', PID)
  router.post('/api-keys/:pid/disable', [ApiKeysController, 'disable']).where('pid', PID)
  router.post('/api-keys/:pid/rotate', [ApiKeysController, 'rotate']).where('pid', PID)
  router.get('/api-keys/:pid/integration', [ApiKeysController, 'integration']).where('pid', PID)
  router.post('/api-keys/:pid/test-callback', [ApiKeysController, 'testCallback']).where('pid', PID)
}
