import { configApp } from '@adonisjs/eslint-config'

export default configApp(
  {
    name: 'Gateway ignores',
    ignores: ['tmp/**', 'storage/**', 'bench/bare_app/build/**'],
  },
  {
    // Tests read one field of a fresh answer in an assertion, e.g.
    // `assert.equal((await Order.findOrFail(id)).status, 'paid')`: a temporary
    // per assertion would hide which row is being looked at. The rule stays on
    // for the application, the plugins, the commands and the benches.
    name: 'Gateway tests',
    files: ['tests/**/*.ts'],
    rules: { '@unicorn/no-await-expression-member': 'off' },
  }
)
