import { BaseSchema } from '@adonisjs/lucid/schema'
import { sealStoredSecrets, unsealStoredSecrets } from '#services/secrets_reencryption'

/**
 * Secrets at rest: merchant API secrets, chain RPC API keys and secret
 * settings are stored encrypted with APP_KEY from now on. Ciphertext is
 * longer than the secret, so the bounded columns become text (SQLite does
 * not enforce lengths); then every plain value is encrypted. Values
 * already encrypted are recognised and left alone, so a run interrupted
 * half-way (or a value written by a newer process meanwhile) is never
 * encrypted twice.
 */
export default class extends BaseSchema {
  async up() {
    this.defer(async (client) => {
      if (client.dialect.name === 'postgres') {
        await client.rawQuery('ALTER TABLE api_keys ALTER COLUMN secret_key TYPE text')
        await client.rawQuery('ALTER TABLE chains ALTER COLUMN api_key TYPE text')
      }
      await sealStoredSecrets(client, { reencrypt: false })
    })
  }

  async down() {
    this.defer(async (client) => {
      await unsealStoredSecrets(client)
      if (client.dialect.name === 'postgres') {
        await client.rawQuery('ALTER TABLE api_keys ALTER COLUMN secret_key TYPE varchar(128)')
        await client.rawQuery('ALTER TABLE chains ALTER COLUMN api_key TYPE varchar(255)')
      }
    })
  }
}
