import { configApp } from '@adonisjs/eslint-config'

export default configApp({
  name: 'Gateway ignores',
  ignores: ['tmp/**', 'storage/**', 'bench/bare_app/build/**'],
})
