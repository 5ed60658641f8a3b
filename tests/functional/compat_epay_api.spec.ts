import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import apiKeyAdmin from '#services/operators/api_key_admin'
import { test } from '@japa/runner'
import { createHash } from 'node:crypto'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import settings from '#settings/settings_service'
import { canonicalString } from '#support/crypto/signing'
import { compatSignature } from '#plugins/compat/compat_signature'
import {
  API_AUTH_FAILED_MESSAGE,
  REFUNDS_UNSUPPORTED_MESSAGE,
} from '#plugins/compat/compat_api_controller'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { FAKE_NETWORK } from '#tests/helpers/fake_chain'
import { TEST_SECRET, TRON_WALLET } from '#tests/helpers/merchant'
import {
  API_PATH,
  MAPI_PATH,
  SUBMIT_PATH,
  compatParams,
  epayEncode,
  epayRequest,
  epaySign,
  epaySigned,
  mapiOrder,
  mapiPost,
  queryOrder,
  tradeIdFromLocation,
} from '#tests/helpers/compat_merchant'

/** "测试商品" (test goods) in GBK, as a shop on a GBK page holds it. */
const GBK_NAME = Buffer.from('b2e2cad4c9ccc6b7', 'hex')
const NAME_TEXT = '测试商品'

/** Every refused signature starts so (a hint on how to sign follows). */
const BAD_SIGN = /^Signature verification failed: requests are signed with MD5 .* \(here: /

const OTHER_PID = '2001'
const OTHER_SECRET = 'secret-of-2001-abcdef'

/** What a plugin in API mode sends to mapi.php (EPay's documented fields). */
function sdkMapiFields(overrides: Record<string, string | Buffer | undefined> = {}) {
  const fields: Record<string, string | Buffer | undefined> = {
    pid: '1000',
    type: 'usdt.tron',
    out_trade_no: `MAPI${Date.now()}${Math.floor(Math.random() * 1e6)}`,
    notify_url: 'http://127.0.0.1:9/epay/notify.php',
    return_url: 'https://shop.example/epay/return.php',
    name: 'VIP membership',
    money: '100.00',
    clientip: '203.0.113.9',
    device: 'pc',
    param: 'user-42',
    ...overrides,
  }
  const clean: Record<string, string | Buffer> = {}
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) clean[name] = value
  return clean
}

function assertEpayRefusal(
  assert: any,
  answer: { status: number; headers: Headers; body: any; text: string },
  msg: RegExp | string
) {
  assert.equal(answer.status, 200, answer.text)
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/)
  assert.deepEqual(Object.keys(answer.body).sort(), ['code', 'msg'], answer.text)
  assert.equal(answer.body.code, -1)
  if (typeof msg === 'string') assert.equal(answer.body.msg, msg)
  else assert.match(answer.body.msg, msg)
}

async function paymentUri(tradeId: string) {
  const response = await fetch(`${process.env.APP_URL}/pay/payment-uri/${tradeId}`)
  return ((await response.json()) as any).data.uri as string
}

test.group('Compat mapi.php (EPay API mode)', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await walletAdmin.add('tron', TRON_WALLET)
  })

  test('the SDK fields: code 1, trade_no, payurl (the cashier) and qrcode (the wallet URI the cashier shows)', async ({
    assert,
  }) => {
    const fields = sdkMapiFields({ out_trade_no: 'MAPI-1001' })
    const answer = await mapiPost(epaySigned(fields))
    assert.equal(answer.status, 200)
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/)
    assert.deepEqual(Object.keys(answer.body).sort(), [
      'code',
      'msg',
      'out_trade_no',
      'payurl',
      'qrcode',
      'trade_no',
    ])
    assert.equal(answer.body.code, 1)
    const order = await Order.findByOrFail('trade_id', answer.body.trade_no)
    assert.equal(answer.body.out_trade_no, 'MAPI-1001')
    assert.equal(answer.body.payurl, `${process.env.APP_URL}/pay/checkout-counter/${order.tradeId}`)
    assert.equal(answer.body.qrcode, await paymentUri(order.tradeId))
    assert.include(answer.body.qrcode, TRON_WALLET)
    assert.deepEqual(
      [
        order.paymentType,
        order.flavourType,
        order.orderId,
        order.name,
        order.network,
        order.token,
        order.status,
      ],
      ['Compat', 'usdt.tron', 'MAPI-1001', 'VIP membership', 'tron', 'USDT', 1]
    )
    assert.equal(order.redirectUrl, 'https://shop.example/epay/return.php')
  })

  test('without a resolved token and network: a placeholder, payurl only (the payer chooses in the cashier)', async ({
    assert,
  }) => {
    const answer = await mapiPost(epaySigned(sdkMapiFields({ type: 'alipay' })))
    assert.equal(answer.body.code, 1, answer.text)
    assert.notProperty(answer.body, 'qrcode')
    assert.equal(
      answer.body.payurl,
      `${process.env.APP_URL}/pay/checkout-counter/${answer.body.trade_no}`
    )
    assert.equal((await Order.findByOrFail('trade_id', answer.body.trade_no)).status, 4)
  })

  test('sign_type absent, an upper-case sign, JSON bodies: all accepted like submit.php', async ({
    assert,
  }) => {
    const withoutSignType = await mapiPost(
      epaySigned(sdkMapiFields(), TEST_SECRET, { signType: false })
    )
    assert.equal(withoutSignType.body.code, 1, withoutSignType.text)

    const fields = sdkMapiFields() as Record<string, string>
    const upper = await mapiPost({
      ...fields,
      sign: epaySign(fields).toUpperCase(),
      sign_type: 'MD5',
    })
    assert.equal(upper.body.code, 1, upper.text)

    const json = await fetch(`${process.env.APP_URL}${MAPI_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(epaySigned(sdkMapiFields() as Record<string, string>)),
    })
    assert.equal(((await json.json()) as any).code, 1)
  })

  test('a GBK name is checked on its bytes and stored as text; a UTF-8 name as well', async ({
    assert,
  }) => {
    const gbk = await mapiPost(epaySigned(sdkMapiFields({ name: GBK_NAME })))
    assert.equal(gbk.body.code, 1, gbk.text)
    assert.equal((await Order.findByOrFail('trade_id', gbk.body.trade_no)).name, NAME_TEXT)

    const utf8 = await mapiPost(epaySigned(sdkMapiFields({ name: NAME_TEXT })))
    assert.equal(utf8.body.code, 1, utf8.text)
    assert.equal((await Order.findByOrFail('trade_id', utf8.body.trade_no)).name, NAME_TEXT)

    // GBK bytes sent with the sign of the UTF-8 text: not what was signed.
    const fields = sdkMapiFields({ name: GBK_NAME })
    const mismatched = await mapiPost({
      ...fields,
      sign: epaySign({ ...fields, name: NAME_TEXT }),
      sign_type: 'MD5',
    })
    assertEpayRefusal(assert, mismatched, BAD_SIGN)
  })

  test('every refusal is code -1 with msg, HTTP 200: signature, unknown pid, fields, business rules', async ({
    assert,
  }) => {
    const fields = sdkMapiFields()
    assertEpayRefusal(
      assert,
      await mapiPost({ ...fields, sign: '0'.repeat(32), sign_type: 'MD5' }),
      BAD_SIGN
    )
    assertEpayRefusal(
      assert,
      await mapiPost(fields),
      /^The sign field is required; requests are signed with MD5/
    )
    assertEpayRefusal(assert, await mapiPost(epaySigned(sdkMapiFields({ pid: '4040' }))), BAD_SIGN)
    assertEpayRefusal(
      assert,
      await mapiPost(epaySigned(sdkMapiFields({ pid: undefined }))),
      /^The pid field is required/
    )
    assertEpayRefusal(
      assert,
      await mapiPost(epaySigned(sdkMapiFields({ money: 'abc' }))),
      /money field must be a decimal/
    )
    assertEpayRefusal(
      assert,
      await mapiPost(epaySigned(sdkMapiFields({ notify_url: undefined }))),
      /notify_url field is required/
    )
    assertEpayRefusal(
      assert,
      await mapiPost(epaySigned(sdkMapiFields({ type: 'wxpay' }))),
      /alipay or an available token\.network/
    )

    // business errors: no wallet on the network, no rate for the currency, a repeated out_trade_no
    await walletAdmin.remove('tron', TRON_WALLET, true)
    assertEpayRefusal(
      assert,
      await mapiPost(
        epaySigned(sdkMapiFields({ type: undefined, token: 'usdt', network: 'tron' }))
      ),
      /^No available wallet address on tron/
    )
    assertEpayRefusal(
      assert,
      await mapiPost(epaySigned(sdkMapiFields({ type: `usdt.${FAKE_NETWORK}`, currency: 'eur' }))),
      /^No exchange rate for USDT\/EUR/
    )
    const once = sdkMapiFields({ type: `usdt.${FAKE_NETWORK}`, out_trade_no: 'MAPI-DUP' })
    assert.equal((await mapiPost(epaySigned(once))).body.code, 1)
    assertEpayRefusal(
      assert,
      await mapiPost(epaySigned({ ...once, money: '50' })),
      /already exists/
    )
    assert.equal(await countRows('orders'), 1)
  })

  test('a GET, a multipart body, a duplicated field: code -1, never the envelope', async ({
    assert,
  }) => {
    assertEpayRefusal(
      assert,
      await epayRequest(MAPI_PATH, { query: epayEncode(epaySigned(sdkMapiFields())) }),
      /POST/
    )

    const form = new FormData()
    for (const [name, value] of Object.entries(epaySigned(sdkMapiFields())))
      form.append(name, String(value))
    const multipart = await fetch(`${process.env.APP_URL}${MAPI_PATH}`, {
      method: 'POST',
      body: form,
    })
    assertEpayRefusal(
      assert,
      {
        status: multipart.status,
        headers: multipart.headers,
        text: '',
        body: await multipart.json(),
      },
      /cannot be parsed/
    )

    const twice = `${epayEncode(epaySigned(sdkMapiFields()))}&money=1`
    assertEpayRefusal(
      assert,
      await epayRequest(MAPI_PATH, { form: twice }),
      /"money" is given more than once/
    )
    assert.equal(await countRows('orders'), 0)
  })

  test('rate limited per pid like submit.php: code -1 with Retry-After; failed signatures count per client IP', async ({
    assert,
  }) => {
    await settings.set('rate_limit.create_per_minute', '2')
    const from = (ip: string, secret = TEST_SECRET) =>
      mapiPost(epaySigned(sdkMapiFields({ type: 'alipay' }), secret), { 'x-forwarded-for': ip })
    assert.equal((await from('198.51.100.1')).body.code, 1)
    assert.equal((await from('198.51.100.2')).body.code, 1)
    const limited = await from('198.51.100.3')
    assertEpayRefusal(assert, limited, /^Too many requests: try again in \d+ seconds$/)
    assert.isAbove(Number(limited.headers.get('retry-after')), 0)

    // the submit.php budget is the same one
    const submit = await epayRequest(SUBMIT_PATH, {
      form: epayEncode(epaySigned(compatParams())),
      headers: { 'x-forwarded-for': '198.51.100.4' },
    })
    assert.equal(submit.status, 429)

    const forged = ['not-the-secret-1', 'not-the-secret-2', 'not-the-secret-3'].map(
      (secret) => () => from('203.0.113.66', secret)
    )
    const messages: string[] = []
    for (const attempt of forged) messages.push((await attempt()).body.msg)
    assert.match(messages[0], BAD_SIGN)
    assert.match(messages[1], BAD_SIGN)
    assert.match(messages[2], /^Too many requests/)
  })
})

test.group('Compat api.php (EPay merchant API)', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await walletAdmin.add('tron', TRON_WALLET)
    await apiKeyAdmin.create({ pid: OTHER_PID, secret: OTHER_SECRET })
  })

  test('act=order by trade_no as the SDK asks: status 0 until paid, then 1 with endtime and the transaction', async ({
    assert,
  }) => {
    const created = await mapiOrder({
      type: 'usdt.tron',
      out_trade_no: 'Q-1001',
      name: NAME_TEXT,
      money: '88.5',
    })
    const before = await queryOrder({ trade_no: created.trade_no })
    assert.equal(before.status, 200)
    assert.match(before.headers.get('content-type') ?? '', /^application\/json/)
    const order = await Order.findByOrFail('trade_id', created.trade_no)
    const addtime = before.body.addtime
    assert.match(addtime, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    assert.deepEqual(before.body, {
      code: 1,
      msg: 'success',
      trade_no: created.trade_no,
      out_trade_no: 'Q-1001',
      api_trade_no: '',
      type: 'usdt.tron',
      pid: 1000,
      addtime,
      endtime: null,
      name: NAME_TEXT,
      money: '88.5000',
      param: '',
      buyer: '',
      status: 0,
    })
    const createdAt = new Date(order.createdAt)
    assert.equal(Number(addtime.slice(0, 4)), createdAt.getFullYear())

    await paymentService.markPaid(order.id, {
      reference: 'tx-query-1',
      source: 'scanner',
      paidAt: Date.now(),
    })
    const after = await queryOrder({ trade_no: created.trade_no })
    assert.equal(after.body.status, 1)
    assert.equal(after.body.api_trade_no, 'tx-query-1')
    assert.match(after.body.endtime, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    // the SDK's orderStatus(): status == 1
    assert.isTrue(Number(after.body.status) === 1)
  })

  test('act=order by out_trade_no; GET or POST; a sign instead of the key', async ({ assert }) => {
    const created = await mapiOrder({ out_trade_no: 'Q-2001' })
    const byOut = await queryOrder({ out_trade_no: 'Q-2001' })
    assert.equal(byOut.body.trade_no, created.trade_no)

    const posted = await epayRequest(API_PATH, {
      query: 'act=order',
      form: epayEncode({ pid: '1000', key: TEST_SECRET, out_trade_no: 'Q-2001' }),
    })
    assert.equal(posted.body.trade_no, created.trade_no)

    const signed = epaySigned({ act: 'order', pid: '1000', out_trade_no: 'Q-2001' })
    const bySign = await epayRequest(API_PATH, { query: epayEncode(signed) })
    assert.equal(bySign.body.trade_no, created.trade_no, bySign.text)
    const badSign = await epayRequest(API_PATH, {
      query: epayEncode({ ...signed, sign: '0'.repeat(32) }),
    })
    assertEpayRefusal(assert, badSign, BAD_SIGN)
  })

  test("unknown order, another pid's order, a wrong key, an unknown pid, a disabled key: code -1", async ({
    assert,
  }) => {
    const mine = await mapiOrder({ out_trade_no: 'Q-3001' })
    const theirs = await mapiPost(
      epaySigned(compatParams({ pid: OTHER_PID, out_trade_no: 'Q-3002' }), OTHER_SECRET)
    )
    assert.equal(theirs.body.code, 1, theirs.text)

    assertEpayRefusal(
      assert,
      await queryOrder({ trade_no: 'AAAAAAAAAAAAAAAAAAAAAA' }),
      'Order does not exist'
    )
    assertEpayRefusal(assert, await queryOrder({ out_trade_no: 'Q-9999' }), 'Order does not exist')
    assertEpayRefusal(
      assert,
      await queryOrder({ trade_no: theirs.body.trade_no }),
      'Order does not exist'
    )
    assertEpayRefusal(assert, await queryOrder({ out_trade_no: 'Q-3002' }), 'Order does not exist')
    // the other pid sees its own, not ours
    const own = await queryOrder({ out_trade_no: 'Q-3002' }, { pid: OTHER_PID, key: OTHER_SECRET })
    assert.equal(own.body.trade_no, theirs.body.trade_no)
    assertEpayRefusal(
      assert,
      await queryOrder({ trade_no: mine.trade_no }, { pid: OTHER_PID, key: OTHER_SECRET }),
      'Order does not exist'
    )

    // one answer for every failed authentication
    assertEpayRefusal(
      assert,
      await queryOrder({ trade_no: mine.trade_no }, { key: OTHER_SECRET }),
      API_AUTH_FAILED_MESSAGE
    )
    assertEpayRefusal(
      assert,
      await queryOrder({ trade_no: mine.trade_no }, { pid: '4040' }),
      API_AUTH_FAILED_MESSAGE
    )
    await apiKeyAdmin.update('1000', { enabled: false })
    assertEpayRefusal(
      assert,
      await queryOrder({ trade_no: mine.trade_no }),
      API_AUTH_FAILED_MESSAGE
    )
    await apiKeyAdmin.update('1000', { enabled: true })

    assertEpayRefusal(
      assert,
      await epayRequest(API_PATH, { query: `act=order&pid=1000&trade_no=${mine.trade_no}` }),
      /key field is required/
    )
    assertEpayRefusal(
      assert,
      await epayRequest(API_PATH, { query: `act=order&pid=1000&key=${TEST_SECRET}` }),
      /trade_no or out_trade_no/
    )
  })

  test('a placeholder paid through its child answers the parent as paid, by either trade_no', async ({
    client,
    assert,
  }) => {
    await chainAdmin.setToken(FAKE_NETWORK, 'USDC', {
      contract: 'fake:usdc-contract',
      decimals: 6,
      precision: 2,
    })
    await rateAdmin.set('USDC', 'CNY', '7.25')
    const parent = await mapiOrder({ out_trade_no: 'Q-4001' })
    assert.equal((await Order.findByOrFail('trade_id', parent.trade_no)).status, 4)
    await switchTo(client, parent.trade_no, FAKE_NETWORK, 'usdt')
    const switched = await switchTo(client, parent.trade_no, FAKE_NETWORK, 'usdc')
    const child = await Order.findByOrFail('trade_id', switched.body().data.trade_id)
    assert.notEqual(child.tradeId, parent.trade_no)

    assert.equal((await queryOrder({ trade_no: parent.trade_no })).body.status, 0)
    await paymentService.markPaid(child.id, {
      reference: 'tx-child-q',
      source: 'scanner',
      paidAt: Date.now(),
    })

    for (const by of [
      { trade_no: parent.trade_no },
      { trade_no: child.tradeId },
      { out_trade_no: 'Q-4001' },
    ]) {
      const answer = await queryOrder(by)
      assert.equal(answer.body.trade_no, parent.trade_no, JSON.stringify(by))
      assert.equal(answer.body.out_trade_no, 'Q-4001')
      assert.equal(answer.body.status, 1)
      assert.equal(answer.body.api_trade_no, 'tx-child-q')
    }
  })

  test("act=orders: the pid's orders, newest first, limit per page", async ({ assert }) => {
    for (const number of [1, 2, 3]) await mapiOrder({ out_trade_no: `L-${number}` })
    await mapiPost(
      epaySigned(compatParams({ pid: OTHER_PID, out_trade_no: 'L-other' }), OTHER_SECRET)
    )

    const list = (query: string) =>
      epayRequest(API_PATH, { query: `act=orders&pid=1000&key=${TEST_SECRET}${query}` })
    const first = await list('&limit=2&page=1')
    assert.equal(first.body.code, 1, first.text)
    assert.equal(first.body.count, 2)
    assert.deepEqual(
      first.body.data.map((order: any) => order.out_trade_no),
      ['L-3', 'L-2']
    )
    assert.deepEqual(Object.keys(first.body.data[0]).sort(), [
      'addtime',
      'api_trade_no',
      'buyer',
      'endtime',
      'money',
      'name',
      'out_trade_no',
      'param',
      'pid',
      'status',
      'trade_no',
      'type',
    ])
    const second = await list('&limit=2&page=2')
    assert.deepEqual(
      second.body.data.map((order: any) => order.out_trade_no),
      ['L-1']
    )
    assert.deepEqual(
      (await list('')).body.data.map((order: any) => order.out_trade_no),
      ['L-3', 'L-2', 'L-1']
    )
    assertEpayRefusal(
      assert,
      await list('&limit=51'),
      /limit field must be a whole number from 1 to 50/
    )
    assertEpayRefusal(
      assert,
      await epayRequest(API_PATH, { query: 'act=orders&pid=1000&key=wrong-key-0000000000' }),
      API_AUTH_FAILED_MESSAGE
    )
  })

  test('act=refund as the SDK posts it: code -1, refunds are not supported; an unknown act: code -1', async ({
    assert,
  }) => {
    const created = await mapiOrder({ type: 'usdt.tron' })
    const refund = await epayRequest(API_PATH, {
      query: 'act=refund',
      form: `pid=1000&key=${TEST_SECRET}&trade_no=${created.trade_no}&money=100.00`,
    })
    assertEpayRefusal(assert, refund, REFUNDS_UNSUPPORTED_MESSAGE)
    assert.notEqual(refund.body.code, 0, 'EPay clients read code 0 as a refund done')

    assertEpayRefusal(
      assert,
      await epayRequest(API_PATH, { query: `act=settle&pid=1000&key=${TEST_SECRET}` }),
      /Unknown act "settle"/
    )
    assertEpayRefusal(
      assert,
      await epayRequest(API_PATH, { query: `pid=1000&key=${TEST_SECRET}` }),
      /act field is required/
    )
    assertEpayRefusal(
      assert,
      await epayRequest(API_PATH, { method: 'POST', form: '' }),
      /act field is required/
    )
  })

  test('queries have a per-pid budget of their own (the query limit); wrong keys count per client IP', async ({
    assert,
  }) => {
    const created = await mapiOrder()
    await settings.set('rate_limit.query_per_minute', '2')
    await settings.set('rate_limit.create_per_minute', '2')
    const ask = (ip: string, key = TEST_SECRET) =>
      queryOrder({ trade_no: created.trade_no }, { key }, { 'x-forwarded-for': ip })

    const answers = [
      await ask('198.51.100.1'),
      await ask('198.51.100.2'),
      await ask('198.51.100.3'),
    ]
    assert.deepEqual(
      answers.map((answer) => answer.body.code),
      [1, 1, -1]
    )
    assertEpayRefusal(assert, answers[2], /^Too many requests: try again in \d+ seconds$/)
    assert.isAbove(Number(answers[2].headers.get('retry-after')), 0)
    // order creation keeps its own budget
    assert.equal(
      (await mapiPost(epaySigned(compatParams()), { 'x-forwarded-for': '198.51.100.4' })).body.code,
      1
    )

    const guesses = [
      await ask('203.0.113.7', 'guess-1'),
      await ask('203.0.113.7', 'guess-2'),
      await ask('203.0.113.7'),
    ]
    assert.deepEqual(
      guesses.map((answer) => answer.body.msg.replace(/\d+ seconds/, 'N seconds')),
      [
        API_AUTH_FAILED_MESSAGE,
        API_AUTH_FAILED_MESSAGE,
        'Too many requests: try again in N seconds',
      ]
    )
  })

  test('a key with a "+" put unencoded in the query by an SDK still matches', async ({
    assert,
  }) => {
    await apiKeyAdmin.create({ pid: '2002', secret: 'plus+secret+0123456789' })
    const created = await mapiPost(
      epaySigned(compatParams({ pid: '2002' }), 'plus+secret+0123456789')
    )
    assert.equal(created.body.code, 1, created.text)
    const answer = await queryOrder(
      { trade_no: created.body.trade_no },
      { pid: '2002', key: 'plus+secret+0123456789' }
    )
    assert.equal(answer.body.trade_no, created.body.trade_no, answer.text)
  })
})

test.group("Compat submit.php with the SDK's request shapes", (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await walletAdmin.add('tron', TRON_WALLET)
  })

  test('the page jump by link (GET) and by form (POST), with a GBK or UTF-8 name, sign_type absent', async ({
    assert,
  }) => {
    const cases: { via: 'link' | 'form'; name: string | Buffer; signType: boolean }[] = [
      { via: 'link', name: GBK_NAME, signType: true },
      { via: 'form', name: GBK_NAME, signType: false },
      { via: 'link', name: NAME_TEXT, signType: false },
      { via: 'form', name: NAME_TEXT, signType: true },
    ]
    for (const [index, { via, name, signType }] of cases.entries()) {
      const fields = {
        ...compatParams({ type: 'usdt.tron', out_trade_no: `SUB-${index}`, sitename: 'My shop' }),
        name,
      }
      const encoded = epayEncode(epaySigned(fields, TEST_SECRET, { signType }))
      const answer = await epayRequest(
        SUBMIT_PATH,
        via === 'link' ? { query: encoded } : { form: encoded }
      )
      assert.equal(answer.status, 302, `${via} ${answer.text}`)
      const order = await Order.findByOrFail(
        'trade_id',
        tradeIdFromLocation(answer.headers.get('location') ?? '')
      )
      assert.equal(order.name, NAME_TEXT)
      assert.equal(order.orderId, `SUB-${index}`)
    }
  })

  test("the MD5 rule on bytes is the canonical string's for text", async ({ assert }) => {
    const params = {
      pid: '1000',
      name: 'Blue mug 蓝色',
      money: '1.00',
      empty: '',
      sign: 'x',
      sign_type: 'MD5',
    }
    const expected = createHash('md5')
      .update(canonicalString(params, ['sign', 'sign_type']) + 'k3y', 'utf8')
      .digest('hex')
    assert.equal(compatSignature(params, 'k3y'), expected)
    const asBytes = Object.fromEntries(
      Object.entries(params).map(([name, value]) => [name, Buffer.from(value)])
    )
    assert.equal(compatSignature(asBytes, 'k3y'), expected)
    assert.equal(epaySign(params, 'k3y'), expected)
  })
})
