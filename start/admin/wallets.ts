/*
| The console's "wallets" pages (registered inside the signed-in group of
| start/admin/index.ts: paths here are relative to ADMIN_PATH).
*/
import router from '@adonisjs/core/services/router'

const WalletsController = () => import('#controllers/admin/wallets_controller')

export function walletsRoutes() {
  router.get('/wallets', [WalletsController, 'index'])
  router.post('/wallets', [WalletsController, 'create'])
  router.get('/wallets/import', [WalletsController, 'showImport'])
  router.post('/wallets/import', [WalletsController, 'import'])
  router.post('/wallets/:id/enable', [WalletsController, 'enable'])
  router.post('/wallets/:id/disable', [WalletsController, 'disable'])
  router.post('/wallets/:id/remove', [WalletsController, 'remove'])
}
