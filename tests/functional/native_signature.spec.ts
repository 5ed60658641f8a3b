import apiKeyAdmin from '#services/operators/api_key_admin'
import { test } from '@japa/runner'
import ApiKey from '#models/api_key'
import { AUTH_FAILED_MESSAGE } from '#services/merchant_auth'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import {
  CREATE_PATH,
  TEST_SECRET,
  createOrder,
  merchantSign,
  orderParams,
  rawPost,
} from '#tests/helpers/merchant'

/** The 401 of a native request with these fields: the same words for every refusal. */
function refusal(params: Record<string, unknown>) {
  const names = Object.keys(params)
    .filter((name) => name !== 'signature' && params[name] !== undefined && params[name] !== '')
    .sort()
  return (
    `${AUTH_FAILED_MESSAGE}: requests are signed with HMAC-SHA256 (64 lower-case hex characters) keyed with the secret_key of the pid, ` +
    `over the sorted name=value pairs of the non-empty fields joined by & (here: ${names.join(', ')})`
  )
}

test.group('Native signature', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await makeTronPayable()
  })

  test('a JSON number 100.00 is signed as 100 (the server numeric format)', async ({ assert }) => {
    const params = orderParams()
    delete params.amount
    const signature = merchantSign({ ...params, amount: '100' })
    // The body carries the number literally as 100.00.
    const body = JSON.stringify({ ...params, signature }).replace(/}$/, ',"amount":100.00}')
    const response = await rawPost(CREATE_PATH, body, 'application/json')
    assert.equal(response.status, 200, JSON.stringify(response.body))
    assert.strictEqual(response.body.data.amount, 100)
  })

  test('a JSON number 100.00 signed as "100.00" is refused', async ({ assert }) => {
    const params = orderParams()
    delete params.amount
    const signature = merchantSign({ ...params, amount: '100.00' })
    const body = JSON.stringify({ ...params, signature }).replace(/}$/, ',"amount":100.00}')
    const response = await rawPost(CREATE_PATH, body, 'application/json')
    assert.equal(response.status, 401)
    assert.equal(response.body.status_code, 401)
  })

  test('a JSON number 12.5 is signed as 12.5', async ({ client }) => {
    const response = await createOrder(client, orderParams({ amount: 12.5 }))
    response.assertStatus(200)
  })

  test('a form value keeps its text: "100.00" is signed as 100.00', async ({ assert }) => {
    const params = orderParams({ amount: '100.00' })
    const good = new URLSearchParams({
      ...(params as Record<string, string>),
      signature: merchantSign(params),
    })
    const response = await rawPost(
      CREATE_PATH,
      good.toString(),
      'application/x-www-form-urlencoded'
    )
    assert.equal(response.status, 200, JSON.stringify(response.body))

    const other = orderParams({ amount: '100.00' })
    const wrong = new URLSearchParams({
      ...(other as Record<string, string>),
      signature: merchantSign({ ...other, amount: '100' }),
    })
    const refused = await rawPost(
      CREATE_PATH,
      wrong.toString(),
      'application/x-www-form-urlencoded'
    )
    assert.equal(refused.status, 401)
  })

  test('a JSON string "100.00" is signed as 100.00', async ({ client }) => {
    const response = await createOrder(client, orderParams({ amount: '100.00' }))
    response.assertStatus(200)
  })

  test('form values are signed exactly as sent, spaces and symbols included', async ({
    assert,
  }) => {
    const params = orderParams({
      name: ' Café & Co = 1+1 ',
      redirect_url: 'https://shop.example/r?a=1&b=2',
    })
    const form = new URLSearchParams({
      ...(params as Record<string, string>),
      signature: merchantSign(params),
    })
    const response = await rawPost(
      CREATE_PATH,
      form.toString(),
      'application/x-www-form-urlencoded'
    )
    assert.equal(response.status, 200, JSON.stringify(response.body))
  })

  test('extra fields are signed; empty fields are not', async ({ client, assert }) => {
    const extra = orderParams({ site_name: 'My shop', redirect_url: '' })
    ;(await createOrder(client, extra)).assertStatus(200)

    const unsignedExtra = orderParams()
    const response = await client
      .post(CREATE_PATH)
      .json({ ...unsignedExtra, signature: merchantSign(unsignedExtra), site_name: 'My shop' })
      .accept('json')
    response.assertStatus(401)
    assert.equal(response.body().status_code, 401)
  })

  test('a non-empty payment_type is signed', async ({ client }) => {
    const params = orderParams()
    const response = await client
      .post(CREATE_PATH)
      .json({ ...params, signature: merchantSign(params), payment_type: 'Compat' })
      .accept('json')
    response.assertStatus(401)
  })

  test('an upper-case hex signature is accepted', async ({ client }) => {
    const params = orderParams()
    const response = await client
      .post(CREATE_PATH)
      .json({ ...params, signature: merchantSign(params).toUpperCase() })
      .accept('json')
    response.assertStatus(200)
  })

  test('a wrong, truncated or missing signature is 401 and writes nothing', async ({
    client,
    assert,
  }) => {
    const params = orderParams()
    for (const signature of [
      '0'.repeat(64),
      merchantSign(params).slice(0, 63),
      '',
      undefined,
      'zz',
    ]) {
      const response = await client
        .post(CREATE_PATH)
        .json({ ...params, ...(signature === undefined ? {} : { signature }) })
        .accept('json')
      response.assertStatus(401)
      assert.equal(response.body().status_code, 401)
      assert.isString(response.body().request_id)
    }
    const tampered = { ...params, signature: merchantSign(params), amount: 1000 }
    ;(await client.post(CREATE_PATH).json(tampered).accept('json')).assertStatus(401)
    assert.equal(await countRows('orders'), 0)
  })

  test('the key is chosen by pid', async ({ client, assert }) => {
    await apiKeyAdmin.create({ pid: '2001', secret: 'secret-of-2001-abcdef' })
    ;(
      await createOrder(client, orderParams({ pid: '2001' }), 'secret-of-2001-abcdef')
    ).assertStatus(200)
    const crossed = await createOrder(client, orderParams({ pid: '2001' }), TEST_SECRET)
    crossed.assertStatus(401)
    assert.equal(crossed.body().status_code, 401)
  })

  test('an unknown pid is 401', async ({ client, assert }) => {
    const response = await createOrder(client, orderParams({ pid: '9999' }))
    response.assertStatus(401)
    assert.equal(response.body().message, refusal(orderParams({ pid: '9999' })))
  })

  test('the 401 says how native requests are signed and over which fields, the same whatever failed, never the value expected', async ({
    client,
    assert,
  }) => {
    const params = orderParams()
    const wrong = await client
      .post(CREATE_PATH)
      .json({ ...params, signature: '0'.repeat(64) })
      .accept('json')
    wrong.assertStatus(401)
    const message = wrong.body().message
    assert.equal(message, refusal(params))
    assert.include(message, 'here: amount, currency, network, notify_url, order_id, pid, token)')
    assert.notInclude(message, merchantSign(params))
    // An MD5 signature (what epusdt and BEpusdt send) gets the same answer, which names the algorithm.
    const md5 = await client
      .post(CREATE_PATH)
      .json({ ...params, signature: 'a'.repeat(32) })
      .accept('json')
    assert.equal(md5.body().message, message)
    // An unknown pid with the same fields: the same words (it does not tell the pid is unknown).
    await apiKeyAdmin.update('1000', { enabled: false })
    const disabled = await client
      .post(CREATE_PATH)
      .json({ ...params, signature: merchantSign(params) })
      .accept('json')
    assert.equal(disabled.body().message, message)
    // No signature at all: said, with the same hint.
    const unsigned = await client.post(CREATE_PATH).json(params).accept('json')
    unsigned.assertStatus(401)
    assert.match(
      unsigned.body().message,
      /^The signature field is required; requests are signed with HMAC-SHA256/
    )
  })

  test('a missing pid is a parameter error that says what a pid is (a shop moving from epusdt sends none)', async ({
    client,
    assert,
  }) => {
    const response = await createOrder(client, orderParams({ pid: undefined }))
    response.assertStatus(400)
    assert.match(
      response.body().message,
      /^The pid field is required: every request names its merchant by the pid of an API key/
    )
  })

  test('a disabled key is 401; enabled again it works', async ({ client, assert }) => {
    await apiKeyAdmin.update('1000', { enabled: false })
    const refused = await createOrder(client, orderParams())
    refused.assertStatus(401)
    assert.equal(refused.body().message, refusal(orderParams()))
    await apiKeyAdmin.update('1000', { enabled: true })
    ;(await createOrder(client, orderParams())).assertStatus(200)
  })

  test('after a rotation the old secret no longer signs', async ({ client }) => {
    await apiKeyAdmin.rotate('1000', 'the-new-secret-0123456789')
    ;(await createOrder(client, orderParams())).assertStatus(401)
    ;(await createOrder(client, orderParams(), 'the-new-secret-0123456789')).assertStatus(200)
  })

  test('an IP allow-list refuses other clients with 401', async ({ client, assert }) => {
    await apiKeyAdmin.update('1000', { ips: ['10.0.0.0/8', '192.168.1.7'] })
    const refused = await createOrder(client, orderParams())
    refused.assertStatus(401)
    assert.equal(refused.body().message, refusal(orderParams()))

    await apiKeyAdmin.update('1000', { ips: ['127.0.0.0/8'] })
    ;(await createOrder(client, orderParams())).assertStatus(200)
  })

  test('a successful request records last_used_at', async ({ client, assert }) => {
    assert.isNull((await ApiKey.findByOrFail('pid', '1000')).lastUsedAt)
    ;(await createOrder(client, orderParams())).assertStatus(200)
    const usedAt = (await ApiKey.findByOrFail('pid', '1000')).lastUsedAt
    assert.isNumber(usedAt)
    assert.approximately(usedAt!, Date.now(), 10_000)
  })

  test("an epusdt plugin's unchanged request is told what to change: a pid first, then the HMAC-SHA256 signature", async ({
    client,
    assert,
  }) => {
    // epusdt's own shape: no pid, no currency, MD5 of the sorted string with the token appended.
    const upstream: Record<string, unknown> = {
      order_id: 'dujiaoka-1001',
      amount: 28.88,
      notify_url: 'https://shop.example/pay/epusdt/notify_url',
      redirect_url: 'https://shop.example/pay/epusdt/return_url',
    }
    const md5 = (await import('node:crypto'))
      .createHash('md5')
      .update(
        Object.keys(upstream)
          .sort()
          .map((key) => `${key}=${upstream[key]}`)
          .join('&') + TEST_SECRET
      )
      .digest('hex')
    const legacy = await client
      .post('/api/v1/order/create-transaction')
      .json({ ...upstream, signature: md5 })
      .accept('json')
    legacy.assertStatus(404)
    const noPid = await client
      .post(CREATE_PATH)
      .json({ ...upstream, signature: md5 })
      .accept('json')
    noPid.assertStatus(400)
    assert.match(
      noPid.body().message,
      /pid field is required: every request names its merchant by the pid of an API key/
    )
    const withPid = await client
      .post(CREATE_PATH)
      .json({ ...upstream, pid: '1000', signature: md5 })
      .accept('json')
    withPid.assertStatus(401)
    assert.match(
      withPid.body().message,
      /signed with HMAC-SHA256 .*\(here: amount, notify_url, order_id, pid, redirect_url\)/
    )
    assert.equal(await countRows('orders'), 0)
  })
})
