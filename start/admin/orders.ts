/*
| The console's "orders" pages (registered inside the signed-in group of
| start/admin/index.ts: paths here are relative to ADMIN_PATH).
*/
import router from '@adonisjs/core/services/router'

const OrdersController = () => import('#controllers/admin/orders_controller')

export function ordersRoutes() {
  router.get('/orders', [OrdersController, 'index'])
  // Before /orders/:tradeId (a trade_id is letters and digits only, never "export.csv").
  router.get('/orders/export.csv', [OrdersController, 'export'])
  router.get('/orders/:tradeId', [OrdersController, 'show'])
  router.post('/orders/:tradeId/mark-paid', [OrdersController, 'markPaid'])
  router.post('/orders/:tradeId/close', [OrdersController, 'close'])
  router.post('/orders/:tradeId/resend-callback', [OrdersController, 'resendCallback'])
}
