import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import { test } from '@japa/runner'
import settings from '#settings/settings_service'
import rateService from '#rates/rate_service'
import { resetDatabase } from '#tests/helpers/database'
import { HttpStub } from '#tests/helpers/http_stub'
import { TRON_WALLET, createOrder, orderParams } from '#tests/helpers/merchant'

test.group('Live rate source', (group) => {
  const stub = new HttpStub()

  group.setup(async () => {
    await stub.start()
    return () => stub.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    await walletAdmin.add('tron', TRON_WALLET)
    await settings.set('rate.api_url', `${stub.url}/v1/currencies`)
    stub.requests = []
    // 1 CNY buys 0.138 USDT
    stub.json({ date: '2026-11-21', cny: { usdt: 0.138, trx: 0.5 } })
  })

  test('converts with GET {url}/{fiat}.json, rounding up', async ({ client, assert }) => {
    const response = await createOrder(client, orderParams({ amount: 100 }))
    response.assertStatus(200)
    assert.strictEqual(response.body().data.actual_amount, 13.8)
    assert.deepEqual(
      stub.requests.map((request) => request.url),
      ['/v1/currencies/cny.json']
    )
  })

  test('rounds up a conversion that is not exact', async ({ client, assert }) => {
    stub.json({ cny: { usdt: '0.13791' } })
    const response = await createOrder(client, orderParams({ amount: 100 }))
    // 13.791 → 13.80
    assert.strictEqual(response.body().data.actual_amount, 13.8)
  })

  test('a fixed rate wins over the live source', async ({ client, assert }) => {
    await rateAdmin.set('USDT', 'CNY', '10')
    const response = await createOrder(client, orderParams({ amount: 100 }))
    assert.strictEqual(response.body().data.actual_amount, 10)
    assert.lengthOf(stub.requests, 0)
  })

  test('answers are cached for rate.cache_ttl_seconds', async ({ client, assert }) => {
    for (let index = 0; index < 3; index++) {
      ;(await createOrder(client, orderParams())).assertStatus(200)
    }
    assert.lengthOf(stub.requests, 1)
  })

  test('once the cache is stale and the source is down, 10006 instead of the old rate', async ({
    client,
    assert,
  }) => {
    // An hour while the cached rate must still be fresh, however slow the machine;
    // then 5 s, and the wait for them to pass.
    await settings.set('rate.cache_ttl_seconds', '3600')
    ;(await createOrder(client, orderParams())).assertStatus(200)
    const fetched = Date.now() // the rate was fetched before this
    stub.json({ error: 'down' }, 503)
    // still fresh: served from the cache
    ;(await createOrder(client, orderParams())).assertStatus(200)
    await settings.set('rate.cache_ttl_seconds', '5')
    while (Date.now() <= fetched + 5000) await new Promise((resolve) => setTimeout(resolve, 100))
    const refused = await createOrder(client, orderParams())
    refused.assertStatus(400)
    assert.equal(refused.body().status_code, 10006)
    assert.match(refused.body().message, /HTTP 503/)
  }).timeout(20_000)

  test('an unreachable source is 10006', async ({ client, assert }) => {
    await settings.set('rate.api_url', 'http://127.0.0.1:9/nothing')
    const response = await createOrder(client, orderParams())
    assert.equal(response.body().status_code, 10006)
    assert.match(response.body().message, /unreachable/)
  })

  test('an answer without the fiat or the token is 10006', async ({ client, assert }) => {
    stub.json({ usd: { usdt: 1 } })
    assert.equal((await createOrder(client, orderParams())).body().status_code, 10006)
    rateService.clearCache()
    stub.json({ cny: { trx: 0.5 } })
    assert.equal((await createOrder(client, orderParams())).body().status_code, 10006)
  })

  test('non-JSON, zero and negative rates are refused', async ({ client, assert }) => {
    stub.handler = (_request, response) => response.end('<html>')
    assert.equal((await createOrder(client, orderParams())).body().status_code, 10006)
    for (const value of [0, -1, 'abc']) {
      rateService.clearCache()
      stub.json({ cny: { usdt: value } })
      assert.equal((await createOrder(client, orderParams())).body().status_code, 10006)
    }
  })
})
