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

const NativeOrdersController = () => import('#controllers/native_orders_controller')
const ConfigController = () => import('#controllers/config_controller')
const CashierController = () => import('#controllers/cashier_controller')

router
  .group(() => {
    router
      .post('/order/create-transaction', [NativeOrdersController, 'create'])
      .use(middleware.throttle({ bucket: 'create' }))
    router.get('/config', [ConfigController, 'show'])
  })
  .prefix('/payments/native/v1')

router
  .group(() => {
    router.get('/checkout-counter/:trade_id', [CashierController, 'page'])
    router.get('/checkout-counter-resp/:trade_id', [CashierController, 'init'])
    router.get('/check-status/:trade_id', [CashierController, 'status'])
  })
  .prefix('/pay')
  .use(middleware.throttle({ bucket: 'cashier' }))
