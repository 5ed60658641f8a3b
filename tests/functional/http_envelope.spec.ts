import { test } from '@japa/runner'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import { createOrder, orderParams } from '#tests/helpers/merchant'
import { startServerProcess } from '#tests/helpers/processes'
import { waitFor } from '#tests/helpers/ops'

test.group('Envelope and request ids', (group) => {
  group.each.setup(() => resetDatabase())

  test('unknown routes answer 404 in the envelope', async ({ client, assert }) => {
    const response = await client.get('/no/such/route')
    response.assertStatus(404)
    const body = response.body()
    assert.deepEqual(Object.keys(body).sort(), ['data', 'message', 'request_id', 'status_code'])
    assert.equal(body.status_code, 404)
    assert.equal(response.header('x-request-id'), body.request_id)
  })

  test('a sane X-Request-Id from a proxy is kept, a bad one replaced', async ({
    client,
    assert,
  }) => {
    const kept = await client
      .get('/payments/native/v1/config')
      .header('x-request-id', 'proxy-req-0001')
    assert.equal(kept.body().request_id, 'proxy-req-0001')
    assert.equal(kept.header('x-request-id'), 'proxy-req-0001')

    const replaced = await client
      .get('/payments/native/v1/config')
      .header('x-request-id', 'bad id <script>')
    assert.notEqual(replaced.body().request_id, 'bad id <script>')
    assert.match(replaced.body().request_id, /^[A-Za-z0-9_-]{16}$/)
  })

  test('the request id is on the access log line of the request', async ({ assert, cleanup }) => {
    const server = await startServerProcess({ LOG_LEVEL: 'info' })
    cleanup(() => server.stop())
    const response = await fetch(`${server.url}/pay/check-status/nope`, {
      headers: { 'x-request-id': 'trace-me-12345' },
    })
    assert.equal(response.headers.get('x-request-id'), 'trace-me-12345')
    // The access log line is written once the response is sent: waited for, not slept on
    // (a whole line only: the text after the last newline may still be coming).
    const accessLine = () =>
      server
        .output()
        .split('\n')
        .slice(0, -1)
        .find((entry) => entry.includes('/pay/check-status/nope'))
    await waitFor(() => accessLine() !== undefined, 'the access log line of the request')
    const record = JSON.parse(accessLine()!)
    assert.equal(record.request_id, 'trace-me-12345')
    assert.equal(record.status, 400)
  }).timeout(60_000)

  test('every request gets its own id', async ({ client, assert }) => {
    const first = (await client.get('/payments/native/v1/config')).body().request_id
    const second = (await client.get('/payments/native/v1/config')).body().request_id
    assert.notEqual(first, second)
  })
})

test.group('Rate limiting', (group) => {
  group.each.setup(() => resetDatabase())

  for (const store of ['memory', 'database']) {
    test(`cashier endpoints answer 429 in the envelope past the limit (${store} store)`, async ({
      client,
      assert,
    }) => {
      await settings.set('rate_limit.store', store)
      await settings.set('rate_limit.cashier_per_minute', '3')
      const statuses: number[] = []
      for (let index = 0; index < 5; index++) {
        statuses.push((await client.get('/pay/check-status/AAAAAAAAAAAAAAAAAAAAAA')).status())
      }
      assert.deepEqual(statuses, [400, 400, 400, 429, 429])
      const limited = await client.get('/pay/checkout-counter-resp/AAAAAAAAAAAAAAAAAAAAAA')
      limited.assertStatus(429)
      assert.equal(limited.body().status_code, 429)
      assert.isString(limited.body().request_id)
      assert.isAbove(Number(limited.header('retry-after')), 0)
    })
  }

  test('the create endpoint has its own limit', async ({ client, assert }) => {
    await makeTronPayable()
    await settings.set('rate_limit.create_per_minute', '2')
    ;(await createOrder(client, orderParams())).assertStatus(200)
    ;(await createOrder(client, orderParams())).assertStatus(200)
    const limited = await createOrder(client, orderParams())
    limited.assertStatus(429)
    assert.equal(limited.body().status_code, 429)
    // the cashier bucket is untouched
    ;(await client.get('/pay/check-status/AAAAAAAAAAAAAAAAAAAAAA')).assertStatus(400)
  })

  test('a limit of 0 turns limiting off', async ({ client }) => {
    await settings.set('rate_limit.cashier_per_minute', '0')
    for (let index = 0; index < 5; index++) {
      ;(await client.get('/pay/check-status/AAAAAAAAAAAAAAAAAAAAAA')).assertStatus(400)
    }
  })

  test('the config endpoint is not limited', async ({ client }) => {
    await settings.set('rate_limit.cashier_per_minute', '1')
    for (let index = 0; index < 5; index++) {
      ;(await client.get('/payments/native/v1/config')).assertStatus(200)
    }
  })
})
