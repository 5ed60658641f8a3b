import { randomBytes } from 'node:crypto'
import env from '#start/env'
import { InstallationSeeder } from '#database/installation_seeder'
import { insertUnlessPresent } from '#support/database/insert_unless_present'
import { SecretPurpose, sealSecret } from '#support/crypto/secret_box'

export const DEFAULT_PID = '1000'

/**
 * The first merchant API key (pid 1000), its secret from
 * INITIAL_API_SECRET or random and then shown once.
 */
export default class ApiKeySeeder extends InstallationSeeder {
  async run() {
    const fromEnv = env.get('INITIAL_API_SECRET')
    const secret =
      fromEnv && fromEnv.trim() !== '' ? fromEnv.trim() : randomBytes(32).toString('hex')
    const now = Date.now()
    const { inserted } = await insertUnlessPresent(
      this.client,
      'api_keys',
      {
        pid: DEFAULT_PID,
        secret_key: sealSecret(secret, SecretPurpose.apiKeySecret),
        status: 'active',
        created_at: now,
        updated_at: now,
      },
      'pid'
    )
    if (!inserted) return
    if (fromEnv) {
      this.print(`Created API key PID ${DEFAULT_PID} with the secret from INITIAL_API_SECRET.`)
    } else {
      this.print(
        `Created API key PID ${DEFAULT_PID}. Its secret is shown only this once:\n` +
          `  pid:        ${DEFAULT_PID}\n  secret_key: ${secret}`
      )
    }
  }
}
