/*
| The console's administrators page (registered inside the signed-in group
| of start/admin/index.ts: paths here are relative to ADMIN_PATH).
*/
import router from '@adonisjs/core/services/router'

const UsersController = () => import('#controllers/admin/users_controller')

export function usersRoutes() {
  router.get('/users', [UsersController, 'index'])
  router.post('/users', [UsersController, 'create'])
  router.post('/users/:id/role', [UsersController, 'setRole'])
  router.post('/users/:id/2fa-reset', [UsersController, 'resetTwoFactor'])
  router.post('/users/:id/disable', [UsersController, 'disable'])
  router.post('/users/:id/enable', [UsersController, 'enable'])
}
