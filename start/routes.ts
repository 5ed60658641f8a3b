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
import pluginRegistry from '#plugin_host/plugin_registry'
import { registerAdminRoutes } from '#start/admin/index'
import env from '#start/env'

const NativeOrdersController = () => import('#controllers/native_orders_controller')
const ConfigController = () => import('#controllers/config_controller')
const CashierController = () => import('#controllers/cashier_controller')
const PaymentTargetController = () => import('#controllers/payment_target_controller')
const PaymentUriController = () => import('#controllers/payment_uri_controller')
const PaymentProgressController = () => import('#controllers/payment_progress_controller')
const CashierPageController = () => import('#controllers/cashier_page_controller')
const PaymentReturnController = () => import('#controllers/payment_return_controller')
const HealthController = () => import('#controllers/health_controller')
const MetricsController = () => import('#controllers/metrics_controller')

// Operations (README "Operations"): probes and Prometheus metrics. No rate
// limit, no session; /metrics checks its token or allow-list itself.
router.get('/health/live', [HealthController, 'live'])
router.get('/health/ready', [HealthController, 'ready'])
router.get('/metrics', [MetricsController, 'show'])

router
  .group(() => {
    // Limited per merchant (pid) in the controller, once authenticated.
    router.post('/order/create-transaction', [NativeOrdersController, 'create'])
    router.post('/order/query', [NativeOrdersController, 'query'])
    router.get('/config', [ConfigController, 'show'])
    router.get('/openapi.json', [() => import('#controllers/openapi_controller'), 'show'])
  })
  .prefix('/payments/native/v1')

// Each enabled plugin's routes, under /payments/<plugin>/v1.
pluginRegistry.mountRoutes({ router, middleware })

router
  .group(() => {
    router.get('/checkout-counter/:trade_id', [CashierController, 'page'])
    router.get('/checkout-counter-resp/:trade_id', [CashierController, 'init'])
    router.get('/check-status/:trade_id', [CashierController, 'status'])
    router.post('/switch-network', [PaymentTargetController, 'switch'])
    router.post('/submit-tx-hash/:trade_id', [PaymentTargetController, 'submitTxHash'])
    router.get('/payment-uri/:trade_id', [PaymentUriController, 'show'])
    router.get('/payment-progress/:trade_id', [PaymentProgressController, 'show'])
    router.get('/return/:trade_id', [PaymentReturnController, 'show'])
  })
  .prefix('/pay')
  .use(middleware.throttle({ bucket: 'cashier' }))

// The payer's page (HTML); its stylesheet and script are static files under public/assets.
router
  .get('/cashier/:trade_id', [CashierPageController, 'show'])
  .use(middleware.throttle({ bucket: 'cashier' }))

// The admin console, under ADMIN_PATH (default /admin): start/admin/index.ts.
registerAdminRoutes()

// Benchmark baselines (bench/create_orders.ts), only with BENCH_ROUTES=true.
if (env.get('BENCH_ROUTES') === true) await import('#start/bench_routes')
