/*
| The console's "chains" pages (registered inside the signed-in group of
| start/admin/index.ts: paths here are relative to ADMIN_PATH): chains,
| adding a network, their tokens, the connection test, and the plugins page.
*/
import router from '@adonisjs/core/services/router'

const ChainsController = () => import('#controllers/admin/chains_controller')
const TokensController = () => import('#controllers/admin/tokens_controller')
const PluginsController = () => import('#controllers/admin/plugins_controller')

export function chainsRoutes() {
  router.get('/chains', [ChainsController, 'index'])
  router.post('/chains', [ChainsController, 'create'])
  router.get('/chains/:network', [ChainsController, 'show'])
  router.post('/chains/:network', [ChainsController, 'update'])
  router.post('/chains/:network/enable', [ChainsController, 'enable'])
  router.post('/chains/:network/disable', [ChainsController, 'disable'])
  router.post('/chains/:network/test', [ChainsController, 'testConnection'])

  router.post('/chains/:network/tokens', [TokensController, 'create'])
  router.get('/chains/:network/tokens/:symbol', [TokensController, 'show'])
  router.post('/chains/:network/tokens/:symbol', [TokensController, 'update'])
  router.post('/chains/:network/tokens/:symbol/enable', [TokensController, 'enable'])
  router.post('/chains/:network/tokens/:symbol/disable', [TokensController, 'disable'])

  router.get('/plugins', [PluginsController, 'index'])
}
