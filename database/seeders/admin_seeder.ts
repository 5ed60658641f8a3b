import app from '@adonisjs/core/services/app'
import env from '#start/env'
import User from '#models/user'
import { InstallationSeeder } from '#database/installation_seeder'
import { AdminUsers, normalizeEmail } from '#services/operators/admin_users'

const DEFAULT_ADMIN_EMAIL = 'admin@localhost'

/**
 * The first administrator: ADMIN_EMAIL / ADMIN_PASSWORD, or admin@localhost
 * with a random password shown once. Without ADMIN_EMAIL, any existing
 * administrator means "installed". Created through the same service (and
 * checks) as `admin:create`.
 */
export default class AdminSeeder extends InstallationSeeder {
  async run() {
    const configuredEmail = env.get('ADMIN_EMAIL')
    const email = normalizeEmail(configuredEmail ?? DEFAULT_ADMIN_EMAIL)
    if (await User.query({ client: this.client }).where('email', email).first()) return
    if (!configuredEmail && (await User.query({ client: this.client }).first())) return

    const users = await app.container.make(AdminUsers)
    const created = await users.createUnlessPresent(
      { email, role: 'admin', password: env.get('ADMIN_PASSWORD') },
      this.client
    )
    if (!created) return
    if (created.generatedPassword === null) {
      this.print(`Created administrator ${email} with the password from ADMIN_PASSWORD.`)
    } else {
      this.print(
        `Created administrator ${email}. Its password is shown only this once:\n` +
          `  email:    ${email}\n  password: ${created.generatedPassword}`
      )
    }
  }
}
