import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import ApiKey from '#models/api_key'
import Order, { OrderStatus } from '#models/order'
import apiKeyAdmin from '#services/operators/api_key_admin'
import { OperatorError } from '#support/cli/operator_error'
import { countRows, emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { runCommand } from '#tests/helpers/ace_command'
import { TEST_SECRET } from '#tests/helpers/merchant'
import ApiKeySet from '#commands/apikey_set'
import ApiKeyList from '#commands/apikey_list'

async function auditRows(action?: string) {
  const query = db.from('audit_log').orderBy('id')
  if (action) query.where('action', action)
  return (await query).map((row) => ({
    ...row,
    before: JSON.parse(row.before ?? 'null'),
    after: JSON.parse(row.after ?? 'null'),
  }))
}

let orderNumber = 0
async function order(apiKey: ApiKey, status: number, parent?: Order) {
  orderNumber++
  return Order.create({
    tradeId: `T${Date.now()}${orderNumber}`,
    orderId: parent ? parent.orderId : `o-${orderNumber}`,
    parentId: parent?.id ?? null,
    apiKeyId: apiKey.id,
    pid: apiKey.pid,
    paymentType: 'Native',
    currency: 'CNY',
    amount: '10',
    notifyUrl: 'https://shop.example/notify',
    status: status as any,
    expirationTime: Date.now() + 600_000,
  })
}

/** Expects an OperatorError with this message, and no change written. */
async function refused(assert: any, work: () => Promise<unknown>, message: string | RegExp) {
  const rowsBefore = await countRows('audit_log')
  const keysBefore = JSON.stringify(await db.from('api_keys').orderBy('id'))
  try {
    await work()
    assert.fail(`expected a refusal: ${message}`)
  } catch (error) {
    assert.instanceOf(error, OperatorError)
    if (typeof message === 'string') assert.equal((error as Error).message, message)
    else assert.match((error as Error).message, message)
  }
  assert.equal(await countRows('audit_log'), rowsBefore)
  assert.equal(JSON.stringify(await db.from('api_keys').orderBy('id')), keysBefore)
}

test.group('API keys for the console: allow-list, note, use', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await emptyAuditLog()
  })

  test('an allow-list is read from a pasted text, duplicates dropped, stored comma-separated and audited', async ({
    assert,
  }) => {
    const keys = apiKeyAdmin
    const key = await keys.update('1000', {
      ips: [' 203.0.113.7, 198.51.100.0/24\n2001:db8::/32\r\n203.0.113.7 '],
    })
    assert.equal(key.ipAllowlist, '203.0.113.7,198.51.100.0/24,2001:db8::/32')
    assert.deepEqual(key.allowedIps, ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32'])
    const [row] = await auditRows('api_key.update')
    assert.equal(row.before.ipAllowlist, '')
    assert.equal(row.after.ipAllowlist, '203.0.113.7,198.51.100.0/24,2001:db8::/32')

    // Emptied: any address again.
    assert.equal((await keys.update('1000', { ips: ['  \n '] })).ipAllowlist, '')
  })

  test('a bad allow-list entry is refused by name, nothing written', async ({ assert }) => {
    const keys = apiKeyAdmin
    for (const entry of [
      '999.1.1.1',
      '10.0.0.0/33',
      '2001:db8::/129',
      'fe80::1%eth0',
      'shop.example',
    ]) {
      await refused(
        assert,
        () => keys.update('1000', { ips: [`203.0.113.7\n${entry}`], note: 'not saved either' }),
        `"${entry}" is not an IP address or CIDR range (examples: 203.0.113.7, 203.0.113.0/24, 2001:db8::/32)`
      )
    }
    const many = Array.from(
      { length: 101 },
      (_, index) => `10.0.${Math.floor(index / 250)}.${index % 250}`
    )
    await refused(
      assert,
      () => keys.update('1000', { ips: [many.join(',')] }),
      'At most 100 addresses or ranges can be allowed (101 given)'
    )
    await refused(
      assert,
      () => keys.create({ ips: ['10.0.0.1', 'nope'] }),
      /"nope" is not an IP address/
    )
    assert.equal(await countRows('api_keys'), 1)
  })

  test('the note: set trimmed, cleared, audited; too long or several lines refused', async ({
    assert,
  }) => {
    const keys = apiKeyAdmin
    assert.equal(
      (await keys.update('1000', { note: '  Main shop (WooCommerce)  ' })).note,
      'Main shop (WooCommerce)'
    )
    const [row] = await auditRows('api_key.update')
    assert.deepEqual([row.before.note, row.after.note], ['', 'Main shop (WooCommerce)'])

    await refused(
      assert,
      () => keys.update('1000', { note: 'x'.repeat(256) }),
      'The note must be at most 255 characters'
    )
    await refused(
      assert,
      () => keys.update('1000', { note: 'line one\nline two' }),
      'The note must be one line of text'
    )
    // Counted in characters, as the column is: 255 of them fit, whatever their bytes.
    assert.equal((await keys.update('1000', { note: 'é'.repeat(255) })).note, 'é'.repeat(255))
    assert.equal((await ApiKey.findByOrFail('pid', '1000')).note, 'é'.repeat(255))
    await refused(
      assert,
      () => keys.create({ note: 'y'.repeat(300) }),
      'The note must be at most 255 characters'
    )
    assert.equal((await keys.update('1000', { note: '' })).note, '')
  })

  test('an update that changes nothing writes no audit row', async ({ assert }) => {
    const keys = apiKeyAdmin
    await keys.update('1000', { enabled: true, ips: [], note: '' })
    assert.equal(await countRows('audit_log'), 0)
    await keys.update('1000', { enabled: false })
    assert.equal(await countRows('audit_log'), 1)
  })

  test('overview: every key with its use and a secret hint, never the secret', async ({
    assert,
  }) => {
    const keys = apiKeyAdmin
    const shop = await keys.create({ pid: 'shop-7', note: 'second shop', ips: ['203.0.113.7'] })
    const main = await ApiKey.findByOrFail('pid', '1000')
    const paidParent = await order(main, OrderStatus.PAID)
    await order(main, OrderStatus.EXPIRED)
    const switched = await order(main, OrderStatus.WAITING)
    await order(main, OrderStatus.PAID, switched) // the child of a switch, paid
    await order(main, OrderStatus.SELECTING)
    assert.isOk(paidParent)

    const overview = await keys.overview()
    assert.deepEqual(
      overview.map(({ createdAt, ...rest }) => rest),
      [
        {
          pid: '1000',
          enabled: true,
          note: '',
          allowedIps: [],
          lastUsedAt: null,
          secretHint: `…${TEST_SECRET.slice(-4)}`,
          ordersCreated: 4,
          ordersPaid: 2,
        },
        {
          pid: 'shop-7',
          enabled: true,
          note: 'second shop',
          allowedIps: ['203.0.113.7'],
          lastUsedAt: null,
          secretHint: `…${shop.signingSecret().slice(-4)}`,
          ordersCreated: 0,
          ordersPaid: 0,
        },
      ]
    )
    assert.notInclude(JSON.stringify(overview), TEST_SECRET)
    assert.notInclude(JSON.stringify(overview), shop.signingSecret())
  })

  test('apikey:set --note and apikey:list with the order counts: the same service', async ({
    assert,
  }) => {
    const set = await runCommand(ApiKeySet, ['1000', '--note=Main shop'])
    assert.equal(set.exitCode, 0, set.output)
    assert.include(set.output, 'note: Main shop')
    assert.equal((await ApiKey.findByOrFail('pid', '1000')).note, 'Main shop')
    const bad = await runCommand(ApiKeySet, ['1000', '--ip=10.0.0.0/33'])
    assert.equal(bad.exitCode, 1)
    assert.include(bad.output, '"10.0.0.0/33" is not an IP address or CIDR range')

    await order(await ApiKey.findByOrFail('pid', '1000'), OrderStatus.PAID)
    const list = await runCommand(ApiKeyList, [])
    assert.equal(list.exitCode, 0)
    const line = list.output.split('\n').find((text) => text.includes('Main shop'))!
    assert.match(line, /1000.*active.*any.*never.*1.*1.*Main shop/)
    assert.notInclude(list.output, TEST_SECRET)
  })
})
