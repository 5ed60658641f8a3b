import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import apiKeyAdmin from '#services/operators/api_key_admin'
import testCallbackSender, { TEST_HEADER } from '#services/admin/test_callback'
import { actingAs } from '#services/audit/audit_context'
import { merchantForGroup } from '#tests/helpers/merchant_group'
import { merchantVerifiesCallback } from '#tests/helpers/merchant'
import { compatSign } from '#tests/helpers/compat_merchant'
import { countRows } from '#tests/helpers/database'
import { CLOSED_URL } from '#tests/helpers/processes'

const NATIVE_FIELDS = [
  'actual_amount',
  'amount',
  'block_transaction_id',
  'order_id',
  'pid',
  'receive_address',
  'signature',
  'status',
  'token',
  'trade_id',
]

async function newKey(pid?: string) {
  const apiKey = await apiKeyAdmin.create({ pid })
  return { apiKey, secret: apiKey.signingSecret() }
}

test.group('Send test callback', (group) => {
  const merchant = merchantForGroup(group, { lifecycle: false })
  group.each.setup(async () => {
    await settings.set('callbacks.allow_private_targets', 'true')
  })

  test('native: a signed POST marked as a test, the merchant answer shown, nothing stored but the audit row', async ({
    assert,
  }) => {
    const { apiKey, secret } = await newKey()
    const result = await actingAs(
      { actor: { kind: 'user', userId: 1, email: 'admin@example.test' }, ip: '203.0.113.9' },
      async () => testCallbackSender.send(apiKey.pid, `${merchant.notifyUrl}?shop=7`)
    )

    assert.lengthOf(merchant.requests, 1)
    const [request] = merchant.requests
    assert.equal(request.method, 'POST')
    assert.equal(request.url, '/notify?shop=7')
    assert.equal(request.headers[TEST_HEADER], '1')
    assert.equal(request.headers['content-type'], 'application/json')
    const body = JSON.parse(request.body)
    assert.deepEqual(Object.keys(body).sort(), NATIVE_FIELDS)
    assert.isTrue(merchantVerifiesCallback(body, secret))
    assert.equal(body.pid, apiKey.pid)
    assert.equal(body.status, 2)
    assert.match(body.trade_id, /^TEST-[0-9A-F]{16}$/)
    assert.match(body.order_id, /^TEST-/)
    assert.match(body.block_transaction_id, /^TEST-/)

    assert.deepInclude(result, {
      outcome: 'acknowledged',
      format: 'native',
      method: 'POST',
      url: `${merchant.notifyUrl}?shop=7`,
      body: request.body,
      tradeId: body.trade_id,
      httpStatus: 200,
      excerpt: 'success',
      error: '',
    })
    assert.isAtLeast(result.durationMs, 0)

    assert.equal(await countRows('orders'), 0)
    assert.equal(await countRows('callbacks'), 0)
    const rows = await db.from('audit_log').where('action', 'api_key.test_callback')
    assert.lengthOf(rows, 1)
    assert.deepInclude(rows[0], {
      actor: 'admin@example.test',
      subject_id: apiKey.pid,
      ip: '203.0.113.9',
    })
    assert.deepEqual(JSON.parse(rows[0].after), {
      url: `${merchant.notifyUrl}?shop=7`,
      format: 'native',
      tradeId: body.trade_id,
      outcome: 'acknowledged',
      httpStatus: 200,
    })
    assert.notInclude(JSON.stringify(rows), secret)
  })

  test('compat: a GET with the EPay fields, MD5-signed, for a numeric pid', async ({ assert }) => {
    const { apiKey, secret } = await newKey()
    const result = await testCallbackSender.send(apiKey.pid, merchant.notifyUrl, 'compat')
    assert.equal(result.outcome, 'acknowledged')
    assert.equal(result.method, 'GET')
    assert.isNull(result.body)
    const [request] = merchant.requests
    assert.equal(request.method, 'GET')
    assert.equal(request.headers[TEST_HEADER], '1')
    const query = Object.fromEntries(new URL(request.url, merchant.url).searchParams)
    assert.equal(query.pid, apiKey.pid)
    assert.equal(query.trade_status, 'TRADE_SUCCESS')
    assert.match(query.trade_no, /^TEST-/)
    assert.equal(query.sign, compatSign(query, secret))
  })

  test('compat is refused for a pid that is not numeric, an unknown format too; nothing is sent', async ({
    assert,
  }) => {
    const { apiKey } = await newKey('shop-7')
    const callbacks = testCallbackSender
    assert.deepEqual(callbacks.formatsFor(apiKey), ['native'])
    await assert.rejects(
      () => callbacks.send('shop-7', merchant.notifyUrl, 'compat'),
      /numeric pid/
    )
    await assert.rejects(
      () => callbacks.send('shop-7', merchant.notifyUrl, 'xml'),
      'Unknown callback format "xml"'
    )
    assert.deepEqual(callbacks.formatsFor({ pid: '1001' }), ['native', 'compat'])
    assert.lengthOf(merchant.requests, 0)
  })

  test('a private address is refused when callbacks.allow_private_targets is off, and not contacted', async ({
    assert,
  }) => {
    await settings.set('callbacks.allow_private_targets', 'false')
    const { apiKey } = await newKey()
    const result = await testCallbackSender.send(apiKey.pid, merchant.notifyUrl)
    assert.equal(result.outcome, 'refused')
    assert.isNull(result.httpStatus)
    assert.include(result.error, '127.0.0.1 is a private or loopback address')
    assert.include(result.error, 'callbacks.allow_private_targets')
    assert.lengthOf(merchant.requests, 0)

    // A host name that resolves to loopback is refused after resolution.
    const byName = await testCallbackSender.send(
      apiKey.pid,
      merchant.notifyUrl.replace('127.0.0.1', 'localhost')
    )
    assert.equal(byName.outcome, 'refused')
    assert.lengthOf(merchant.requests, 0)
  })

  test('a merchant slower than callbacks.timeout_seconds: failed, after about that long', async ({
    assert,
  }) => {
    await settings.set('callbacks.timeout_seconds', '1')
    const { apiKey } = await newKey()
    // The merchant answers only after the send is over: only the timeout can have ended it.
    merchant.hold()
    const result = await testCallbackSender.send(apiKey.pid, merchant.notifyUrl)
    assert.equal(merchant.heldCount, 1, 'the answer is still held')
    merchant.release()
    assert.equal(result.outcome, 'failed')
    assert.isNull(result.httpStatus)
    assert.include(result.error, 'timed out after 1 s')
    assert.isAtLeast(result.durationMs, 900)
    // Ended by the 1 s timeout, not by a longer one.
    assert.isBelow(result.durationMs, 5000)
  })

  test('an answer other than 200 + ok/success is shown with its status and the start of its body', async ({
    assert,
  }) => {
    const { apiKey } = await newKey()
    const callbacks = testCallbackSender
    merchant.reset([{ status: 500, body: 'Internal error: order lookup failed' }])
    const failed = await callbacks.send(apiKey.pid, merchant.notifyUrl)
    assert.deepInclude(failed, {
      outcome: 'not_acknowledged',
      httpStatus: 500,
      excerpt: 'Internal error: order lookup failed',
    })
    assert.include(failed.error, 'HTTP 500')

    merchant.reset([{ status: 200, body: 'received' }])
    const unexpected = await callbacks.send(apiKey.pid, merchant.notifyUrl)
    assert.deepInclude(unexpected, {
      outcome: 'not_acknowledged',
      httpStatus: 200,
      excerpt: 'received',
    })

    merchant.reset([{ status: 200, body: 'x'.repeat(10_000) }])
    const long = await callbacks.send(apiKey.pid, merchant.notifyUrl)
    assert.equal(long.excerpt, 'x'.repeat(500))
  })

  test('nobody listening: failed with the connection error', async ({ assert }) => {
    const { apiKey } = await newKey()
    const result = await testCallbackSender.send(apiKey.pid, `${CLOSED_URL}/notify`)
    assert.equal(result.outcome, 'failed')
    assert.include(result.error, 'ECONNREFUSED')
  })

  test('refused before sending: no URL, not a URL, not http(s), an unknown pid', async ({
    assert,
  }) => {
    const { apiKey } = await newKey()
    const callbacks = testCallbackSender
    await assert.rejects(
      () => callbacks.send(apiKey.pid, '  '),
      'Give the URL to send the test callback to'
    )
    await assert.rejects(() => callbacks.send(apiKey.pid, 'shop.example/notify'), /is not a URL/)
    await assert.rejects(
      () => callbacks.send(apiKey.pid, 'ftp://shop.example/notify'),
      'The URL must start with http:// or https://'
    )
    await assert.rejects(
      () => callbacks.send(apiKey.pid, `https://shop.example/${'a'.repeat(2100)}`),
      /at most 2048/
    )
    await assert.rejects(
      () => callbacks.send('4242', merchant.notifyUrl),
      'No API key with pid 4242'
    )
    assert.lengthOf(merchant.requests, 0)
    assert.equal(await countRows('audit_log', { action: 'api_key.test_callback' }), 0)
  })
})
