/*
|--------------------------------------------------------------------------
| Routes
|--------------------------------------------------------------------------
|
| Paths are the interface spec's. The former routes
| POST /api/v1/order/create-transaction and
| POST /payments/epusdt/v1/order/create-transaction are deliberately not
| registered (they answer 404).
*/
import router from '@adonisjs/core/services/router'
import { middleware } from '#start/kernel'
import pluginRegistry from '#app_plugins/plugin_registry'

const NativeOrdersController = () => import('#controllers/native_orders_controller')
const ConfigController = () => import('#controllers/config_controller')
const CashierController = () => import('#controllers/cashier_controller')
const PaymentTargetController = () => import('#controllers/payment_target_controller')
const PaymentUriController = () => import('#controllers/payment_uri_controller')

router
  .group(() => {
    // Limited per merchant (pid) in the controller, once authenticated.
    router.post('/order/create-transaction', [NativeOrdersController, 'create'])
    router.get('/config', [ConfigController, 'show'])
  })
  .prefix('/payments/native/v1')

// Each enabled plugin's routes, under /payments/<plugin>/v1 (compat, provider, ...).
pluginRegistry.mountRoutes({ router, middleware })

router
  .group(() => {
    router.get('/checkout-counter/:trade_id', [CashierController, 'page'])
    router.get('/checkout-counter-resp/:trade_id', [CashierController, 'init'])
    router.get('/check-status/:trade_id', [CashierController, 'status'])
    router.post('/switch-network', [PaymentTargetController, 'switch'])
    router.post('/submit-tx-hash/:trade_id', [PaymentTargetController, 'submitTxHash'])
    router.get('/payment-uri/:trade_id', [PaymentUriController, 'show'])
  })
  .prefix('/pay')
  .use(middleware.throttle({ bucket: 'cashier' }))
