/*
| The console's audit log page (registered inside the signed-in group of
| start/admin/index.ts: paths here are relative to ADMIN_PATH). Read
| only: no route edits or deletes a row.
*/
import router from '@adonisjs/core/services/router'

const AuditController = () => import('#controllers/admin/audit_controller')

export function auditRoutes() {
  router.get('/audit', [AuditController, 'index'])
}
