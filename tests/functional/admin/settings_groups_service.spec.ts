import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings, { SettingsInputError } from '#settings/settings_service'
import { SETTINGS } from '#settings/definitions'
import pluginsConfig from '#config/plugins'
import settingsGroups, {
  allSettingsGroups,
  groupedKeys,
  keysByGroup,
  turnedOffPlugin,
} from '#services/admin/settings_groups'
import { actingAs } from '#services/audit/audit_context'
import { SecretPurpose, looksSealed, revealSecret } from '#support/crypto/secret_box'
import { OperatorError } from '#support/cli/operator_error'
import { emptyAuditLog, resetDatabase } from '#tests/helpers/database'

const ADMIN = { actor: { kind: 'user' as const, userId: 1, email: 'admin@example.com' } }

async function storedValue(key: string): Promise<string | undefined> {
  const row = await db.from('settings').where('key', key).first()
  return row?.value
}

async function auditRows(action = 'setting.set') {
  const rows = await db.from('audit_log').where('action', action).orderBy('id')
  return rows.map((row) => ({
    ...row,
    before: JSON.parse(row.before ?? 'null'),
    after: JSON.parse(row.after ?? 'null'),
  }))
}

test.group('Settings groups: every definition has a page', () => {
  test('each setting of the core and of every bundled plugin is in exactly one group', async ({
    assert,
  }) => {
    // The notification settings (notify.*) have their own page: Notifications.
    const definitions = new Set(Object.keys(SETTINGS).filter((key) => !key.startsWith('notify.')))
    for (const load of Object.values(pluginsConfig)) {
      const plugin = (await load()).default
      for (const key of Object.keys(plugin.settings ?? {}))
        if (!key.startsWith('notify.')) definitions.add(key)
    }
    const seen = new Map<string, string[]>()
    for (const group of allSettingsGroups()) {
      for (const key of Object.keys(group.labels))
        seen.set(key, [...(seen.get(key) ?? []), group.id])
    }
    const missing = [...definitions].filter((key) => !seen.has(key))
    assert.deepEqual(missing, [], 'settings with no group')
    const twice = [...seen].filter(([, ids]) => ids.length > 1).map(([key]) => key)
    assert.deepEqual(twice, [], 'settings in several groups')
    const stale = [...seen.keys()].filter((key) => !definitions.has(key))
    assert.deepEqual(stale, [], 'group keys that no definition has')
    assert.equal(groupedKeys().size, definitions.size)
  })

  test('a setting no group names (a plugin from elsewhere) is shown in "Other plugins"', async ({
    assert,
  }) => {
    const byGroup = keysByGroup(['acme.greeting', 'site.logo_url', 'site.cashier_name'])
    assert.deepEqual(byGroup.get('plugins'), ['acme.greeting'])
    // In the order of the page's labels, not of the definitions.
    assert.deepEqual(byGroup.get('site'), ['site.cashier_name', 'site.logo_url'])
  })

  test('a group whose plugin is turned off is named so', async ({ assert }) => {
    const provider = allSettingsGroups().find((entry) => entry.id === 'provider')!
    assert.equal(
      turnedOffPlugin(provider, new Map([['provider.shop_token', 'provider']])),
      'provider'
    )
    assert.isNull(turnedOffPlugin(provider, new Map()))
    assert.isNull(
      turnedOffPlugin(
        allSettingsGroups().find((entry) => entry.id === 'site')!,
        new Map([['x', 'provider']])
      )
    )
  })

  test('the summaries list every page but the empty fallback, with the count of each', async ({
    assert,
  }) => {
    const summaries = (await settingsGroups.summaries()).filter(
      (summary) => summary.id !== 'plugins'
    )
    assert.deepEqual(
      summaries.map((summary) => summary.id),
      [
        'site',
        'orders',
        'rates',
        'callbacks',
        'rate_limits',
        'chains',
        // The plugins' own pages, in the plugins' order (config/plugins.ts).
        'provider',
        'compat',
        'metrics',
        'console',
      ]
    )
    assert.equal(summaries.find((summary) => summary.id === 'site')!.count, 6)
    assert.isTrue(summaries.every((summary) => summary.turnedOffPlugin === null))
  })
})

test.group('Settings groups: pages and saving', (group) => {
  group.each.setup(() => resetDatabase())

  test('a page shows each value as text, its default, its input and its bounds', async ({
    assert,
  }) => {
    await settings.set('order.expiration_minutes', '25')
    const page = await settingsGroups.page('orders')
    assert.deepEqual(
      page.fields.map((field) => field.key),
      ['order.expiration_minutes', 'order.late_payment_margin_seconds', 'order.amount_max_steps']
    )
    const lifetime = page.fields[0]
    assert.include(lifetime, {
      label: 'Order lifetime (minutes)',
      input: 'number',
      value: '25',
      defaultText: '10',
      stored: true,
    })
    assert.deepEqual(lifetime.bounds, { min: 1, max: 1440 })
    assert.isFalse(page.fields[1].stored)

    const limits = await settingsGroups.page('rate_limits')
    const store = limits.fields.find((field) => field.key === 'rate_limit.store')!
    assert.equal(store.input, 'select')
    assert.deepEqual(store.options, ['memory', 'database', 'redis'])
    const provider = await settingsGroups.page('provider')
    assert.equal(
      provider.fields.find((field) => field.key === 'provider.allow_tokens')!.value,
      'USDT,TRX'
    )
    assert.equal(
      provider.fields.find((field) => field.key === 'provider.enabled')!.input,
      'boolean'
    )
  })

  test('saving a group stores the changed values, one audit row each, by the acting admin', async ({
    assert,
  }) => {
    await emptyAuditLog()
    const changed = await actingAs(ADMIN, async () =>
      settingsGroups.save('orders', {
        values: {
          'order.expiration_minutes': '30',
          'order.late_payment_margin_seconds': '900',
          'order.amount_max_steps': '50',
        },
      })
    )
    // 900 is the default already: not written, not audited.
    assert.deepEqual(changed.sort(), ['order.amount_max_steps', 'order.expiration_minutes'])
    assert.strictEqual(await settings.get('order.expiration_minutes'), 30)
    assert.strictEqual(await settings.get('order.amount_max_steps'), 50)
    assert.isUndefined(await storedValue('order.late_payment_margin_seconds'))
    const rows = await auditRows()
    assert.deepEqual(
      rows.map((row) => [row.subject_id, row.before, row.after, row.actor]),
      [
        ['order.expiration_minutes', null, 30, 'admin@example.com'],
        ['order.amount_max_steps', null, 50, 'admin@example.com'],
      ]
    )
  })

  test('one invalid value stores nothing and names each refused field', async ({ assert }) => {
    await emptyAuditLog()
    const service = settingsGroups
    const error = await service
      .save('orders', {
        values: {
          'order.expiration_minutes': '45',
          'order.late_payment_margin_seconds': 'soon',
          'order.amount_max_steps': '0',
        },
      })
      .catch((caught) => caught)
    assert.instanceOf(error, SettingsInputError)
    assert.deepEqual(error.errors, {
      'order.late_payment_margin_seconds': 'must be a whole number',
      'order.amount_max_steps': 'must be between 1 and 10000',
    })
    assert.strictEqual(await settings.get('order.expiration_minutes'), 10)
    assert.isUndefined(await storedValue('order.expiration_minutes'))
    assert.lengthOf(await auditRows(), 0)
  })

  test('a key of another page, or unknown, is refused', async ({ assert }) => {
    const service = settingsGroups
    const error = await service
      .save('orders', { values: { 'site.cashier_name': 'Shop', 'no.such': 'x' } })
      .catch((caught) => caught)
    assert.instanceOf(error, SettingsInputError)
    assert.sameMembers(Object.keys(error.errors), ['site.cashier_name', 'no.such'])
    assert.strictEqual(await settings.get('site.cashier_name'), 'Crypto Cashier')
    await assert.rejects(() => service.save('nope', { values: {} }), /No settings group "nope"/)
  })

  test('an emptied text is stored as "" and shown as ""; a null from a form counts as emptied', async ({
    assert,
  }) => {
    const service = settingsGroups
    await service.save('site', { values: { 'site.cashier_name': '', 'site.website_title': null } })
    assert.strictEqual(await storedValue('site.cashier_name'), '')
    assert.strictEqual(await storedValue('site.website_title'), '')
    assert.strictEqual(await settings.get('site.cashier_name'), '')
    const page = await service.page('site')
    assert.equal(page.fields.find((field) => field.key === 'site.cashier_name')!.value, '')
    assert.isTrue(page.fields.find((field) => field.key === 'site.cashier_name')!.stored)
    // A field the form does not send is left as it is.
    await service.save('site', { values: { 'site.support_link': 'https://help.example' } })
    assert.strictEqual(await storedValue('site.cashier_name'), '')
  })

  test('colours are checked like settings:set does', async ({ assert }) => {
    const service = settingsGroups
    const error = await service
      .save('site', { values: { 'site.background_color': 'red;}body{x' } })
      .catch((caught) => caught)
    assert.instanceOf(error, SettingsInputError)
    assert.match(error.errors['site.background_color'], /must match/)
    await service.save('site', { values: { 'site.background_color': '#0a7' } })
    assert.strictEqual(await settings.get('site.background_color'), '#0a7')
  })

  test('booleans, enums and lists are saved through their definitions', async ({ assert }) => {
    const service = settingsGroups
    await service.save('callbacks', { values: { 'callbacks.allow_private_targets': 'true' } })
    assert.isTrue(await settings.get('callbacks.allow_private_targets'))
    await service.save('rate_limits', { values: { 'rate_limit.store': 'database' } })
    assert.equal(await settings.get('rate_limit.store'), 'database')
    await service.save('provider', { values: { 'provider.allow_tokens': 'usdt, trx ,eth' } })
    assert.deepEqual(await settings.read('provider.allow_tokens'), ['USDT', 'TRX', 'ETH'])
    const bad = await service
      .save('rate_limits', { values: { 'rate_limit.store': 'disk' } })
      .catch((caught) => caught)
    assert.match(bad.errors['rate_limit.store'], /one of memory, database, redis/)
  })
})

test.group('Settings groups: the provider token is a secret', (group) => {
  group.each.setup(() => resetDatabase())

  const TOKEN = 'shop-token-0123456789-abcd'

  test('stored encrypted, shown masked, never sent back; the audit says only that it was set', async ({
    assert,
  }) => {
    const service = settingsGroups
    await emptyAuditLog()
    await service.save('provider', {
      values: { 'provider.shop_token': TOKEN, 'provider.shop_id': 'shop-1' },
    })
    const stored = (await storedValue('provider.shop_token'))!
    assert.isTrue(looksSealed(stored))
    assert.equal(revealSecret(stored, SecretPurpose.setting('provider.shop_token')), TOKEN)

    const field = (await service.page('provider')).fields.find(
      (entry) => entry.key === 'provider.shop_token'
    )!
    assert.equal(field.input, 'secret')
    assert.equal(field.value, '')
    assert.deepEqual(field.secret, { set: true, masked: '…abcd' })
    assert.notInclude(JSON.stringify(await service.page('provider')), TOKEN)
    const audit = JSON.stringify(await db.from('audit_log').select('*'))
    assert.notInclude(audit, TOKEN)
    assert.notInclude(audit, 'abcd')
  })

  test('a blank secret keeps the stored one; "clear" empties it; both at once is refused', async ({
    assert,
  }) => {
    const service = settingsGroups
    await service.save('provider', { values: { 'provider.shop_token': TOKEN } })
    const sealed = await storedValue('provider.shop_token')

    const changed = await service.save('provider', {
      values: { 'provider.shop_token': '', 'provider.shop_id': 'shop-2' },
    })
    assert.deepEqual(changed, ['provider.shop_id'])
    assert.equal(await storedValue('provider.shop_token'), sealed)

    const both = await service
      .save('provider', {
        values: { 'provider.shop_token': 'other-token' },
        clear: ['provider.shop_token'],
      })
      .catch((caught) => caught)
    assert.instanceOf(both, SettingsInputError)
    assert.match(both.errors['provider.shop_token'], /not both/)
    assert.equal(await storedValue('provider.shop_token'), sealed)

    const notSecret = await service
      .save('provider', { values: {}, clear: ['provider.shop_id'] })
      .catch((caught) => caught)
    assert.match(notSecret.errors['provider.shop_id'], /not a secret/)

    await service.save('provider', {
      values: { 'provider.shop_token': '' },
      clear: ['provider.shop_token'],
    })
    assert.strictEqual(await storedValue('provider.shop_token'), '')
    const field = (await service.page('provider')).fields.find(
      (entry) => entry.key === 'provider.shop_token'
    )!
    assert.deepEqual(field.secret, { set: false, masked: '' })
  })
})

test.group('Settings groups: fixed rates', (group) => {
  group.each.setup(() => resetDatabase())

  test('fixed rates go through RateAdmin: its rules and its audit', async ({ assert }) => {
    const service = settingsGroups
    await emptyAuditLog()
    await actingAs(ADMIN, () => service.setFixedRate('usdt', 'eur', '0.92'))
    const rates = await service.fixedRates()
    assert.deepInclude(
      rates.map((rate) => [rate.token, rate.fiat, rate.rate]),
      ['USDT', 'EUR', '0.92']
    )
    const [row] = await auditRows('rate.set')
    assert.equal(row.subject_id, 'USDT/EUR')
    assert.equal(row.actor, 'admin@example.com')
    await assert.rejects(() => service.setFixedRate('USDT', 'EUR', '-1'), OperatorError)
    await assert.rejects(() => service.setFixedRate('USDT', 'E', '1'), /currency code/)
  })
})
