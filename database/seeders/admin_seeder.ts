import { randomBytes } from 'node:crypto'
import hash from '@adonisjs/core/services/hash'
import env from '#start/env'
import User from '#models/user'
import { InstallationSeeder } from '#database/installation_seeder'
import { insertUnlessPresent } from '#support/insert_unless_present'

const DEFAULT_ADMIN_EMAIL = 'admin@localhost'

/**
 * The first administrator: ADMIN_EMAIL / ADMIN_PASSWORD, or admin@localhost
 * with a random password shown once. Without ADMIN_EMAIL, any existing
 * administrator means "installed".
 */
export default class AdminSeeder extends InstallationSeeder {
  async run() {
    const configuredEmail = env.get('ADMIN_EMAIL')
    const email = (configuredEmail ?? DEFAULT_ADMIN_EMAIL).toLowerCase()
    if (await User.query({ client: this.client }).where('email', email).first()) return
    if (!configuredEmail && (await User.query({ client: this.client }).first())) return

    const configuredPassword = env.get('ADMIN_PASSWORD')
    const password = configuredPassword ?? randomBytes(12).toString('base64url')
    const now = Date.now()
    const { inserted } = await insertUnlessPresent(
      this.client,
      'users',
      { email, password: await hash.make(password), role: 'admin', created_at: now, updated_at: now },
      'email'
    )
    if (!inserted) return
    if (configuredPassword) {
      this.print(`Created administrator ${email} with the password from ADMIN_PASSWORD.`)
    } else {
      this.print(
        `Created administrator ${email}. Its password is shown only this once:\n` +
          `  email:    ${email}\n  password: ${password}`
      )
    }
  }
}
