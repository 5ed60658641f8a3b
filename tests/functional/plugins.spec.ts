import rateAdmin from '#services/operators/rate_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import settings from '#settings/settings_service'
import Callback from '#models/callback'
import paymentService from '#services/payment_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { merchantForGroup } from '#tests/helpers/merchant_group'
import {
  compatParams,
  compatSigned,
  submitGet,
  tradeIdFromLocation,
} from '#tests/helpers/compat_merchant'
import { CREATE_PATH, createOrder, orderParams, signed } from '#tests/helpers/merchant'
import { makeTronPayable } from '#tests/helpers/setup'
import { runAce, startServerProcess, type RunningServer } from '#tests/helpers/processes'
import { waitFor } from '#tests/helpers/ops'

const COMPAT_PATH = '/payments/compat/v1/order/create-transaction/submit.php'
const NOTIFY_PATH = '/payments/provider/v1/notify'
const DEMO_MODULE = './tests/fixtures/plugins/demo/plugin.ts'

/** A wallet on every seeded network (stored as is: only its presence matters here). */
async function walletEverywhere() {
  const now = Date.now()
  for (const chain of await Chain.all()) {
    await db.table('wallets').insert({
      network: chain.network,
      address: `w-${chain.network}`,
      enabled: true,
      created_at: now,
      updated_at: now,
    })
  }
  await rateAdmin.set('USDT', 'CNY', '7.25')
  await settings.set('rate_limit.create_per_minute', '0')
}

async function configOf(server: RunningServer) {
  const response = await fetch(`${server.url}/payments/native/v1/config`)
  return ((await response.json()) as any).data
}

async function createOn(server: RunningServer, network: string) {
  const response = await fetch(`${server.url}${CREATE_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'accept': 'application/json' },
    body: JSON.stringify(signed(orderParams({ network, token: 'usdt' }))),
  })
  return (await response.json()) as any
}

/** Networks of a family, from the seeded chains. */
async function networksOf(family: string) {
  return (await Chain.query().where('family', family)).map((chain) => chain.network)
}

test.group('Plugins: each left out in turn', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(90_000)

  for (const left of ['tron', 'evm', 'solana', 'ton', 'provider', 'compat']) {
    test(`PLUGINS=-${left}: starts, serves the others, and ${left}'s routes, networks and settings are gone`, async ({
      assert,
      cleanup,
    }) => {
      await walletEverywhere()
      // Offered: the enabled networks (those seeded disabled, e.g. arbitrum, wait for the operator).
      const all = (await Chain.query().where('enabled', true).orderBy('sort_order')).map(
        (chain) => chain.network
      )
      const gone = await networksOf(left)
      const server = await startServerProcess({ PLUGINS: `-${left}` })
      cleanup(() => server.stop())

      // Networks: the left-out family's are not offered, the others are.
      const config = await configOf(server)
      const offered = config.supported_assets.map((asset: { network: string }) => asset.network)
      assert.deepEqual(
        offered,
        all.filter((network) => !gone.includes(network))
      )
      for (const network of gone) {
        const refused = await createOn(server, network)
        assert.equal(
          refused.status_code,
          10016,
          `a new ${network} order is refused like an unknown network`
        )
        assert.include(refused.message, `unknown network "${network}"`)
      }
      const other = offered[0]
      assert.equal((await createOn(server, other)).status_code, 200, `${other} still takes orders`)

      // Routes: 404 for the left-out plugin, served for the others.
      const compat = await fetch(`${server.url}${COMPAT_PATH}`)
      assert.equal(
        compat.status === 404,
        left === 'compat',
        `compat route answered ${compat.status}`
      )
      const notify = await fetch(`${server.url}${NOTIFY_PATH}`, { method: 'POST', body: 'x=1' })
      assert.equal(
        notify.status === 404,
        left === 'provider',
        `notify route answered ${notify.status}`
      )
      if (left !== 'provider') assert.equal(await notify.text(), 'fail')

      // Config sections of a left-out plugin fall back to their neutral values.
      if (left === 'compat') {
        assert.deepEqual(config.compat, {
          default_token: '',
          default_currency: '',
          default_network: '',
        })
      } else {
        assert.equal(config.compat.default_currency, 'cny')
      }
      if (left === 'provider')
        assert.deepEqual(config.provider, { enabled: false, allow_tokens: [] })
      else assert.deepEqual(config.provider.allow_tokens, ['USDT', 'TRX'])

      // The OpenAPI document: a left-out plugin's callback is not among the webhooks, while
      // the config sections the spec requires keep their schema (the answer still has them).
      const doc = (await (
        await fetch(`${server.url}/payments/native/v1/openapi.json`)
      ).json()) as any
      assert.equal('compatPaymentCallback' in doc.webhooks, left !== 'compat')
      assert.includeMembers(Object.keys(doc.components.schemas.PublicConfig.properties), [
        'compat',
        'provider',
      ])
      assert.includeMembers(doc.components.schemas.PaymentType.enum, ['native', 'compat'])
    })
  }

  test('settings of a left-out plugin are hidden from settings:get and refused by settings:set', async ({
    assert,
  }) => {
    const listed = (await settings.list()).map((row) => row.key)
    assert.includeMembers(listed, ['provider.shop_id', 'compat.default_token'], 'listed when on')

    const withoutProvider = await runAce(['settings:get'], { PLUGINS: '-provider' })
    assert.equal(withoutProvider.code, 0, withoutProvider.stderr)
    assert.notInclude(withoutProvider.stdout, 'provider.shop_id')
    assert.include(withoutProvider.stdout, 'compat.default_currency')

    const refused = await runAce(['settings:set', 'compat.default_token', 'usdt'], {
      PLUGINS: '-compat',
    })
    assert.equal(refused.code, 1)
    assert.include(
      refused.stdout + refused.stderr,
      '"compat.default_token" is a setting of the plugin "compat", which is turned off'
    )
    assert.equal(await settings.read('compat.default_token'), '', 'not stored')
  })

  test('plugins:list shows each plugin, on or off, and what it contributes', async ({ assert }) => {
    const result = await runAce(['plugins:list'], { PLUGINS: '-ton,-provider' })
    assert.equal(result.code, 0, result.stderr)
    const row = (name: string) =>
      result.stdout.split('\n').find((line) => line.includes(` ${name} `)) ?? ''
    assert.match(row('ton'), /│\s+no\s+│/)
    assert.match(row('provider'), /│\s+no\s+│/)
    assert.match(row('evm'), /│\s+yes\s+│/)
    assert.include(row('evm'), 'families: evm')
    assert.include(row('provider'), 'routes: /payments/provider/v1/*')
    assert.include(row('compat'), 'callback formats: compat')
  })

  test('a PLUGINS value that mixes both forms or names an unknown plugin stops start-up with a clear message', async ({
    assert,
  }) => {
    const mixed = await runAce(['plugins:list'], { PLUGINS: 'evm,-ton' })
    assert.notEqual(mixed.code, 0)
    assert.include(mixed.stdout + mixed.stderr, 'PLUGINS mixes kept and removed plugins')

    const error = await startServerProcess({ PLUGINS: '-ton,-bitcoin' }).then(
      async (server) => {
        await server.stop()
        return ''
      },
      (failure: Error) => failure.message
    )
    assert.include(error, 'PLUGINS names unknown plugin(s): bitcoin')
  })
})

test.group('Plugins: orders of a left-out family', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(90_000)

  test('stay readable at the cashier and are expired normally', async ({
    client,
    assert,
    cleanup,
  }) => {
    await makeTronPayable()
    const created = await createOrder(client, orderParams({ network: 'tron' }))
    const tradeId = created.body().data.trade_id
    await Order.query()
      .where('trade_id', tradeId)
      .update({ expiration_time: Date.now() - 1000 })

    const server = await startServerProcess({ PLUGINS: '-tron', RUN_JOBS: 'true' })
    cleanup(() => server.stop())

    const init = await fetch(`${server.url}/pay/checkout-counter-resp/${tradeId}`)
    assert.equal(init.status, 200)
    assert.equal(((await init.json()) as any).data.trade_id, tradeId)

    const deadline = Date.now() + 30_000
    let status = 0
    while (Date.now() < deadline) {
      const response = await fetch(`${server.url}/pay/check-status/${tradeId}`)
      status = ((await response.json()) as any).data.status
      if (status === 3) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.equal(status, 3, 'expired by the server without the tron plugin')
  })
})

test.group('Plugins: compat left out with Compat orders in the database', (group) => {
  const merchant = merchantForGroup(group, { lifecycle: false })
  group.each.timeout(90_000)

  test("a paid Compat order's callback is held (no attempt spent) while compat is off, then delivered", async ({
    client,
    assert,
  }) => {
    await makeTronPayable()
    await settings.set('callbacks.allow_private_targets', 'true')
    const response = await submitGet(
      client,
      compatSigned(
        compatParams({ type: 'usdt.tron', money: '88.5', notify_url: merchant.notifyUrl })
      )
    )
    const order = await Order.findByOrFail(
      'trade_id',
      tradeIdFromLocation(response.header('location'))
    )
    await paymentService.markPaid(order.id, { reference: 'tron-hash-held', source: 'scanner' })

    const held = await runAce(['callbacks:deliver'], { PLUGINS: '-compat' })
    assert.equal(held.code, 0, held.stderr)
    assert.include(held.stdout, '1 held (callback format not loaded: its plugin is turned off)')
    assert.lengthOf(merchant.requests, 0, 'never sent in another format')
    const waiting = await Callback.findByOrFail('order_id', order.id)
    assert.equal(waiting.status, 'pending')
    assert.equal(
      waiting.attempts,
      0,
      'no attempt spent: retries cannot run out while the plugin is off'
    )
    assert.include(waiting.lastError, 'the "compat" callback format is not loaded')
    assert.equal(await countRows('callback_attempts', { callback_id: waiting.id }), 0)

    // Compat back on (this process has every plugin): the callback goes out, as a compat GET.
    await db.from('callbacks').where('id', waiting.id).update({ next_attempt_at: Date.now() })
    const delivered = await runAce(['callbacks:deliver'])
    assert.equal(delivered.code, 0, delivered.stderr)
    assert.match(delivered.stdout, /1 delivered/)
    assert.lengthOf(merchant.requests, 1)
    assert.equal(merchant.requests[0].method, 'GET')
    assert.equal((await Callback.findByOrFail('order_id', order.id)).status, 'delivered')
  })

  test("a paid Compat order's return, while compat is off, goes back to the cashier (it cannot be signed)", async ({
    client,
    assert,
    cleanup,
  }) => {
    await makeTronPayable()
    const response = await submitGet(client, compatSigned(compatParams({ type: 'usdt.tron' })))
    const order = await Order.findByOrFail(
      'trade_id',
      tradeIdFromLocation(response.header('location'))
    )
    await paymentService.markPaid(order.id, { reference: 'tron-hash-return', source: 'scanner' })

    const server = await startServerProcess({ PLUGINS: '-compat' })
    cleanup(() => server.stop())
    const back = await fetch(`${server.url}/pay/return/${order.tradeId}`, { redirect: 'manual' })
    assert.equal(back.status, 302)
    assert.equal(back.headers.get('location'), `/cashier/${order.tradeId}`)

    // With compat on (this process), the same order returns to the shop with the signed fields.
    const signedBack = await client.get(`/pay/return/${order.tradeId}`).redirects(0)
    assert.equal(signedBack.status(), 302)
    assert.match(
      signedBack.header('location') ?? '',
      /^https:\/\/shop\.example\/return\?.*sign=[0-9a-f]{32}/
    )
  })

  test('a native create asking for payment_type Compat is refused while compat is off', async ({
    assert,
    cleanup,
  }) => {
    await walletEverywhere()
    const server = await startServerProcess({ PLUGINS: '-compat' })
    cleanup(() => server.stop())
    const refused = await fetch(`${server.url}${CREATE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept': 'application/json' },
      body: JSON.stringify(
        signed(orderParams({ network: 'tron', token: 'usdt', payment_type: 'Compat' }))
      ),
    })
    assert.equal(refused.status, 400)
    const body = (await refused.json()) as any
    assert.equal(body.status_code, 400)
    assert.include(body.message, 'payment_type Compat is not available: its plugin is turned off')
    assert.equal(await countRows('orders'), 0, 'nothing written')

    const native = await createOn(server, 'tron')
    assert.equal(native.status_code, 200, JSON.stringify(native))
  })
})

test.group('Plugins: a plugin from PLUGIN_MODULES', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(90_000)

  test('brings its family, route, setting, seed chain and command without other changes', async ({
    assert,
    cleanup,
  }) => {
    // Its migrations (tests/fixtures/plugins/demo/migrations) join the core's.
    const migrated = await runAce(['migration:run', '--force'], { PLUGIN_MODULES: DEMO_MODULE })
    assert.equal(migrated.code, 0, migrated.stdout + migrated.stderr)
    cleanup(async () => {
      await db.connection().schema.dropTableIfExists('demo_greetings')
      await db.from('adonis_schema').where('name', 'like', '%demo_greetings%').delete()
    })
    assert.isTrue(await db.connection().schema.hasTable('demo_greetings'))
    const server = await startServerProcess({ PLUGIN_MODULES: DEMO_MODULE })
    cleanup(() => server.stop())
    const ready = await fetch(`${server.url}/health/ready`)
    assert.equal(ready.status, 200, 'no migration of the plugin left pending')
    const kept = await fetch(`${server.url}/payments/demo/v1/greetings`, { method: 'POST' })
    assert.deepEqual(((await kept.json()) as any).data, { kept: 1 })

    const hello = await fetch(`${server.url}/payments/demo/v1/hello`)
    assert.equal(hello.status, 200)
    assert.deepEqual(((await hello.json()) as any).data, { greeting: 'hello from demo' })

    // Seeded by the start-up installation; offered once it has a wallet.
    const chain = await Chain.findByOrFail('network', 'demonet')
    assert.equal(chain.family, 'demo')
    const now = Date.now()
    await db.table('wallets').insert({
      network: 'demonet',
      address: 'demo:w1',
      enabled: true,
      created_at: now,
      updated_at: now,
    })
    // Written past the server's models: its configuration copy sees it within 2 s (config_cache).
    let offered: string[] = []
    await waitFor(
      async () => {
        offered = (await configOf(server)).supported_assets.map(
          (asset: { network: string }) => asset.network
        )
        return offered.includes('demonet')
      },
      'the demo network offered once it has a wallet',
      5_000
    )
    assert.include(offered, 'demonet')

    const set = await runAce(['settings:set', 'demo.greeting', 'hi there'], {
      PLUGIN_MODULES: DEMO_MODULE,
    })
    assert.equal(set.code, 0, set.stdout + set.stderr)
    const greet = await runAce(['demo:greet'], { PLUGIN_MODULES: DEMO_MODULE })
    assert.include(greet.stdout, 'greeting: hi there')

    // Its order flavour: payment_type demo (any case) is its format's; the refusal names it too.
    const createWith = (paymentType: string) =>
      fetch(`${server.url}/payments/native/v1/order/create-transaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept': 'application/json' },
        body: JSON.stringify(
          signed(orderParams({ token: undefined, network: undefined, payment_type: paymentType }))
        ),
      })
    const demoOrder = await createWith('demo')
    assert.equal(demoOrder.status, 200)
    const demoTradeId = ((await demoOrder.json()) as any).data.trade_id
    assert.equal((await Order.findByOrFail('trade_id', demoTradeId)).paymentType, 'Demo')
    const unknownType = (await (await createWith('xml')).json()) as any
    assert.include(
      JSON.stringify(unknownType),
      'The payment_type field must be Native, Compat or Demo'
    )

    // Its view and texts, from its own folder, in English (ICU plural) and in Chinese.
    const english = await fetch(`${server.url}/payments/demo/v1/page?name=Ann&count=2`)
    assert.equal(english.status, 200)
    const englishHtml = await english.text()
    assert.include(englishHtml, '<title>Demo page</title>')
    assert.include(englishHtml, '<p id="greeting">Hello, Ann: 2 demo networks</p>')
    const one = await (await fetch(`${server.url}/payments/demo/v1/page?name=Ann&count=1`)).text()
    assert.include(one, 'Hello, Ann: 1 demo network</p>')
    const chinese = await (
      await fetch(`${server.url}/payments/demo/v1/page?lang=zh-CN&name=Ann&count=2`)
    ).text()
    assert.include(chinese, '<html lang="zh-CN">')
    assert.include(chinese, '<title>演示页面</title>')
    assert.include(chinese, '你好，Ann：2 个演示网络')

    // Without the module line, none of it exists.
    const without = await runAce(['settings:set', 'demo.greeting', 'x'])
    assert.include(without.stdout + without.stderr, 'unknown setting "demo.greeting"')
    await server.stop()
    const plain = await startServerProcess()
    cleanup(() => plain.stop())
    assert.equal((await fetch(`${plain.url}/payments/demo/v1/hello`)).status, 404)
    const plainOffered = (await configOf(plain)).supported_assets.map(
      (asset: { network: string }) => asset.network
    )
    assert.notInclude(plainOffered, 'demonet')
  })
})
