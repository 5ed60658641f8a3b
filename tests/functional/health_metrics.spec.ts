import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import paymentService from '#services/payment_service'
import orderExpiry from '#services/order_expiry'
import readiness from '#services/readiness'
import { RpcPool } from '#chains/rpc_pool'
import { beginShutdown, resetShutdownState } from '#support/runtime/shutdown'
import { resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK } from '#tests/helpers/fake_chain'
import { sample } from '#tests/helpers/ops'

const TOKEN = 'scrape-token-0123456789'

test.group('Health probes', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    readiness.reset()
    return () => {
      resetShutdownState()
      readiness.reset()
    }
  })

  test('GET /health/live answers 200 without a session or a cache', async ({ client, assert }) => {
    const response = await client.get('/health/live')
    response.assertStatus(200)
    assert.deepEqual(response.body(), { status: 'live' })
    assert.equal(response.header('cache-control'), 'no-store')
    assert.isUndefined(response.header('set-cookie'))
  })

  test('GET /health/ready is 200 when the database answers and every migration is applied', async ({
    client,
    assert,
  }) => {
    const response = await client.get('/health/ready')
    response.assertStatus(200)
    assert.deepEqual(response.body(), {
      status: 'ready',
      ready: true,
      checks: { database: 'ok', migrations: 'ok', process: 'ok' },
    })
    assert.isUndefined(response.header('set-cookie'))
  })

  test('GET /health/ready is 503 naming the migration still pending', async ({
    client,
    assert,
  }) => {
    const last = await db.from('adonis_schema').orderBy('id', 'desc').first()
    await db.from('adonis_schema').where('id', last.id).delete()
    try {
      const response = await client.get('/health/ready')
      response.assertStatus(503)
      assert.equal(response.body().checks.migrations, 'pending')
      assert.equal(response.body().checks.database, 'ok')
      assert.deepEqual(response.body().pending_migrations, [last.name])
    } finally {
      await db.table('adonis_schema').insert(last)
    }
    readiness.reset()
    ;(await client.get('/health/ready')).assertStatus(200)
  })

  test('GET /health/ready is 503 once shutting down, at once (the cached answer aside)', async ({
    client,
    assert,
  }) => {
    ;(await client.get('/health/ready')).assertStatus(200)
    beginShutdown()
    const response = await client.get('/health/ready')
    response.assertStatus(503)
    assert.equal(response.body().checks.process, 'shutting_down')
    assert.equal(response.body().checks.database, 'ok')
  })
})

test.group('Metrics', (group) => {
  group.each.setup(() => resetDatabase())

  test('neither token nor allow-list: loopback clients only', async ({ client, assert }) => {
    const local = await client.get('/metrics')
    local.assertStatus(200)
    assert.match(local.header('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
    // Through the (trusted, loopback) proxy for a client elsewhere: refused.
    const remote = await client.get('/metrics').header('x-forwarded-for', '203.0.113.5')
    remote.assertStatus(403)
    assert.notInclude(remote.text(), 'gateway_')
    assert.notInclude(remote.text(), 'loopback')
  })

  test('a token: refused without it or with a wrong one (401), served with it', async ({
    client,
    assert,
  }) => {
    await settings.set('metrics.token', TOKEN)
    const none = await client.get('/metrics')
    none.assertStatus(401)
    assert.equal(none.header('www-authenticate'), 'Bearer realm="metrics"')
    assert.notInclude(none.text(), 'gateway_')
    ;(await client.get('/metrics').header('authorization', `Bearer ${TOKEN}x`)).assertStatus(401)
    ;(
      await client.get('/metrics').header('authorization', `Bearer ${TOKEN.slice(0, -1)}`)
    ).assertStatus(401)
    ;(await client.get('/metrics').header('authorization', TOKEN)).assertStatus(401)
    ;(await client.get('/metrics').header('authorization', `Basic ${TOKEN}`)).assertStatus(401)
    const allowed = await client.get('/metrics').header('authorization', `Bearer ${TOKEN}`)
    allowed.assertStatus(200)
    assert.include(allowed.text(), 'gateway_http_request_duration_seconds')
    // With a token alone, any address may scrape with it.
    const remote = await client
      .get('/metrics')
      .header('authorization', `Bearer ${TOKEN}`)
      .header('x-forwarded-for', '203.0.113.5')
    remote.assertStatus(200)
    // The token is stored encrypted, like every secret setting.
    const row = await db.from('settings').where('key', 'metrics.token').first()
    assert.notInclude(row.value, TOKEN)
  })

  test('an allow-list: addresses outside it refused (403), inside it served; with a token as well both are needed', async ({
    client,
  }) => {
    await settings.set('metrics.allowed_ips', '198.51.100.0/24, 2001:db8::1')
    ;(await client.get('/metrics').header('x-forwarded-for', '198.51.100.7')).assertStatus(200)
    ;(await client.get('/metrics').header('x-forwarded-for', '2001:db8::1')).assertStatus(200)
    ;(await client.get('/metrics').header('x-forwarded-for', '203.0.113.5')).assertStatus(403)
    // Loopback itself is not in the list.
    ;(await client.get('/metrics')).assertStatus(403)

    await settings.set('metrics.token', TOKEN)
    ;(await client.get('/metrics').header('x-forwarded-for', '198.51.100.7')).assertStatus(401)
    ;(
      await client
        .get('/metrics')
        .header('x-forwarded-for', '203.0.113.5')
        .header('authorization', `Bearer ${TOKEN}`)
    ).assertStatus(403)
    ;(
      await client
        .get('/metrics')
        .header('x-forwarded-for', '198.51.100.7')
        .header('authorization', `Bearer ${TOKEN}`)
    ).assertStatus(200)
  })

  test('the allow-list setting refuses what is not an address or a range', async ({ assert }) => {
    await assert.rejects(
      () => settings.set('metrics.allowed_ips', '10.0.0.0/33'),
      /not an IP address or CIDR range/
    )
    await assert.rejects(
      () => settings.set('metrics.allowed_ips', 'example.com'),
      /not an IP address or CIDR range/
    )
    assert.equal(
      await settings.set('metrics.allowed_ips', '10.0.0.1 10.1.0.0/16'),
      '10.0.0.1,10.1.0.0/16'
    )
  })

  test('every named series is exposed, and creating, paying and expiring orders shows in the counters', async ({
    client,
    assert,
  }) => {
    await prepareLifecycle()
    await db.from('chains').where('network', FAKE_NETWORK).update({ block_time_ms: 3000 })
    const scrape = async () => {
      const response = await client.get('/metrics')
      response.assertStatus(200)
      return response.text()
    }
    const labels = `network="${FAKE_NETWORK}",token="USDT"`
    const before = await scrape()
    const count = (text: string, series: string) => sample(text, series) ?? 0

    const paid = await newOrder(client)
    const expiring = await newOrder(client, { amount: 101 })
    await paymentService.markPaid(paid.id, { reference: 'fake-tx-metrics-1', source: 'admin' })
    // Paying the same again is a no-op: not counted twice.
    await paymentService.markPaid(paid.id, { reference: 'fake-tx-metrics-1', source: 'admin' })
    await db
      .from('orders')
      .where('id', expiring.id)
      .update({ expiration_time: Date.now() - 1000 })
    assert.equal(await orderExpiry.expireDue(), 1)
    await client.get('/no/such/route')
    await db.table('chain_cursors').insert({
      network: FAKE_NETWORK,
      cursor: '',
      head_height: '120',
      scanned_height: '100',
      heights_at: Date.now() - 4000,
      updated_at: Date.now(),
    })
    const pool = new RpcPool(['http://127.0.0.1:9/v3/secret-path-key?apikey=hidden'], {
      network: 'metricsnet',
      timeoutMs: 2000,
      cooldownMs: 1000,
      retries: 0,
    })
    await assert.rejects(() => pool.call((url) => pool.fetch(url)))

    const after = await scrape()
    for (const name of [
      'gateway_http_request_duration_seconds',
      'gateway_http_requests_in_flight',
      'gateway_orders_created_total',
      'gateway_orders_paid_total',
      'gateway_orders_expired_total',
      'gateway_callback_attempts_total',
      'gateway_callback_outbox_depth',
      'gateway_scanner_lag_blocks',
      'gateway_scanner_lag_seconds',
      'gateway_scanner_heights_age_seconds',
      'gateway_rpc_requests_total',
      'gateway_rpc_errors_total',
      'gateway_amount_allocation_retries_total',
      'gateway_metrics_scrape_ok',
      'gateway_process_cpu_seconds_total',
      'gateway_nodejs_heap_size_used_bytes',
    ]) {
      assert.include(after, `# TYPE ${name} `, name)
    }

    const create = 'method="POST",route="/payments/native/v1/order/create-transaction",status="200"'
    assert.equal(
      count(after, `gateway_http_request_duration_seconds_count{${create}}`) -
        count(before, `gateway_http_request_duration_seconds_count{${create}}`),
      2
    )
    assert.isAtLeast(
      count(
        after,
        'gateway_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}'
      ),
      1
    )
    assert.notInclude(after, '/no/such/route')
    assert.notInclude(after, paid.tradeId)

    assert.equal(
      count(after, `gateway_orders_paid_total{${labels}}`) -
        count(before, `gateway_orders_paid_total{${labels}}`),
      1
    )
    assert.equal(
      count(after, `gateway_orders_expired_total{${labels}}`) -
        count(before, `gateway_orders_expired_total{${labels}}`),
      1
    )
    assert.equal(sample(after, 'gateway_callback_outbox_depth{status="pending"}'), 1)
    assert.equal(sample(after, 'gateway_callback_outbox_depth{status="failed"}'), 0)
    assert.equal(sample(after, `gateway_scanner_lag_blocks{network="${FAKE_NETWORK}"}`), 20)
    assert.equal(sample(after, `gateway_scanner_lag_seconds{network="${FAKE_NETWORK}"}`), 60)
    assert.isAtLeast(
      sample(after, `gateway_scanner_heights_age_seconds{network="${FAKE_NETWORK}"}`)!,
      4
    )

    const endpoint = 'network="metricsnet",endpoint="127.0.0.1:9"'
    assert.equal(
      count(after, `gateway_rpc_requests_total{${endpoint}}`) -
        count(before, `gateway_rpc_requests_total{${endpoint}}`),
      1
    )
    assert.equal(
      count(after, `gateway_rpc_errors_total{${endpoint},kind="network"}`) -
        count(before, `gateway_rpc_errors_total{${endpoint},kind="network"}`),
      1
    )
    assert.notInclude(after, 'secret-path-key')
    assert.notInclude(after, 'hidden')
    assert.equal(
      sample(after, 'gateway_metrics_scrape_ok{series="gateway_callback_outbox_depth"}'),
      1
    )
  })

  test('a scrape gauge whose database read fails does not fail the scrape', async ({
    client,
    assert,
  }) => {
    await db.rawQuery('ALTER TABLE callbacks RENAME TO callbacks_away')
    try {
      const response = await client.get('/metrics')
      response.assertStatus(200)
      const text = response.text()
      assert.equal(
        sample(text, 'gateway_metrics_scrape_ok{series="gateway_callback_outbox_depth"}'),
        0
      )
      assert.equal(
        sample(text, 'gateway_metrics_scrape_ok{series="gateway_scanner_lag_blocks"}'),
        1
      )
      assert.isUndefined(sample(text, 'gateway_callback_outbox_depth{status="pending"}'))
      assert.include(text, 'gateway_http_request_duration_seconds_bucket')
    } finally {
      await db.rawQuery('ALTER TABLE callbacks_away RENAME TO callbacks')
    }
    const again = (await client.get('/metrics')).text()
    assert.equal(
      sample(again, 'gateway_metrics_scrape_ok{series="gateway_callback_outbox_depth"}'),
      1
    )
  })
})
