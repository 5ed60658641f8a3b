import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings, { SETTINGS_REFRESH_MS } from '#settings/settings_service'
import { SettingValueError } from '#settings/setting_types'
import { resetDatabase } from '#tests/helpers/database'
import { runAce } from '#tests/helpers/processes'
import { providerSettings } from '#plugins/provider/provider_settings'
import { compatSettings } from '#plugins/compat/compat_settings'

/** The stored text of a setting (undefined without a row). */
async function storedValue(key: string): Promise<string | undefined> {
  const row = await db.from('settings').where('key', key).first()
  return row?.value
}

test.group('Settings', (group) => {
  group.each.setup(() => resetDatabase())

  test('typed values with defaults', async ({ assert }) => {
    assert.strictEqual(await settings.get('order.expiration_minutes'), 10)
    assert.strictEqual(await providerSettings.get('provider.enabled'), false)
    assert.deepEqual(await providerSettings.get('provider.allow_tokens'), ['USDT', 'TRX'])
    assert.strictEqual(await compatSettings.get('compat.default_currency'), 'cny')
    await settings.set('order.expiration_minutes', '15')
    assert.strictEqual(await settings.get('order.expiration_minutes'), 15)
  })

  test('invalid values and unknown keys are refused with a reason', async ({ assert }) => {
    await assert.rejects(() => settings.set('order.expiration_minutes', 'ten'), SettingValueError)
    await assert.rejects(() => settings.set('order.expiration_minutes', '0'), /between 1 and 1440/)
    await assert.rejects(() => settings.set('provider.enabled', 'maybe'), /true or false/)
    await assert.rejects(() => settings.set('rate_limit.store', 'disk'), /memory, database, redis/)
    await assert.rejects(() => settings.set('rate.api_url', 'ftp://x'), /http/)
    await assert.rejects(() => settings.set('no.such.key', '1'), /unknown setting/)
  })

  test('a corrupt stored value falls back to the default', async ({ assert }) => {
    await db
      .table('settings')
      .insert({ key: 'order.expiration_minutes', type: 'integer', value: 'x', updated_at: 0 })
    settings.invalidate()
    assert.strictEqual(await settings.get('order.expiration_minutes'), 10)
  })

  test('settings:set KEY "" empties a text setting, as a process', async ({ client, assert }) => {
    await settings.set('compat.default_token', 'USDT')
    await settings.set('compat.default_network', 'tron')

    const emptied = await runAce(['settings:set', 'compat.default_token', ''])
    assert.equal(emptied.code, 0, emptied.stderr + emptied.stdout)
    assert.include(emptied.stdout, 'compat.default_token = ""')
    assert.strictEqual(await storedValue('compat.default_token'), '')
    settings.invalidate()
    assert.strictEqual(await compatSettings.get('compat.default_token'), '')

    // The public config returns the emptied default as an empty string.
    const config = await client.get('/payments/native/v1/config')
    assert.strictEqual(config.body().data.compat.default_token, '')
    assert.strictEqual(config.body().data.compat.default_network, 'tron')

    const shown = await runAce(['settings:get', 'compat.default_token'])
    assert.equal(shown.code, 0, shown.stderr)
    assert.equal(shown.stdout.trim(), '""')
  }).timeout(60_000)

  test('settings:set KEY "" is refused by settings that cannot be empty; no value at all is refused', async ({
    assert,
  }) => {
    const integer = await runAce(['settings:set', 'order.expiration_minutes', ''])
    assert.equal(integer.code, 1)
    assert.match(integer.stderr, /whole number/)
    assert.notMatch(integer.stderr, /Missing value/)
    assert.isUndefined(await storedValue('order.expiration_minutes'))

    const missing = await runAce(['settings:set', 'compat.default_token'])
    assert.notEqual(missing.code, 0)
    assert.match(missing.stderr + missing.stdout, /Missing required argument "value"/)
  }).timeout(60_000)

  test('a change written by another process is seen within the refresh window', async ({
    assert,
  }) => {
    assert.strictEqual(await settings.get('order.expiration_minutes'), 10)
    // This process's copy is at most this fresh.
    const loaded = Date.now()
    const result = await runAce(['settings:set', 'order.expiration_minutes', '42'])
    assert.equal(result.code, 0, result.stderr + result.stdout)

    // Every read asked SETTINGS_REFRESH_MS or more after the copy was taken reads the table
    // again, so it must answer the new value; reads before that may still answer the old one.
    const deadline = Date.now() + 10_000
    for (;;) {
      const asked = Date.now()
      const value = await settings.get('order.expiration_minutes')
      if (value === 42) break
      assert.strictEqual(value, 10)
      assert.isBelow(
        asked - loaded,
        SETTINGS_REFRESH_MS,
        'a read past the refresh window answered the old value'
      )
      assert.isBelow(Date.now(), deadline, 'the change was not seen')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }).timeout(30_000)
})
