import env from '#start/env'
import { defineConfig, drivers } from '@adonisjs/core/encryption'

/**
 * AES-256-GCM keyed by APP_KEY. The first key encrypts; every key of the
 * list decrypts, so values written under a previous APP_KEY (listed in
 * APP_KEY_PREVIOUS) stay readable until `node ace secrets:reencrypt` has
 * moved them to the current key.
 */
const encryptionConfig = defineConfig({
  default: 'app',
  list: {
    app: drivers.aes256gcm({
      id: 'app',
      keys: [env.get('APP_KEY'), ...env.get('APP_KEY_PREVIOUS')],
    }),
    // The current key alone (same id, so its output is `app` output): tells
    // secrets:reencrypt which values are already under the current key.
    current: drivers.aes256gcm({
      id: 'app',
      keys: [env.get('APP_KEY')],
    }),
  },
})

export default encryptionConfig
