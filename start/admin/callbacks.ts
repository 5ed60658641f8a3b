/*
| The console's "callbacks" pages (registered inside the signed-in group of
| start/admin/index.ts: paths here are relative to ADMIN_PATH).
*/
import router from '@adonisjs/core/services/router'

const CallbacksController = () => import('#controllers/admin/callbacks_controller')

export function callbacksRoutes() {
  router.get('/callbacks', [CallbacksController, 'index'])
  router.post('/callbacks/redeliver', [CallbacksController, 'redeliverBatch'])
  router.get('/callbacks/:id', [CallbacksController, 'show'])
  router.post('/callbacks/:id/redeliver', [CallbacksController, 'redeliver'])
}
