import { test } from '@japa/runner'
import { createHmac } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import router from '@adonisjs/core/services/router'
import env from '#start/env'
import Order from '#models/order'
import configCache from '#services/config_cache'
import orderService from '#services/order_service'
import paymentService from '#services/payment_service'
import chainScanner from '#services/chain_scanner'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { isAcknowledged } from '#callbacks/retry_policy'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle } from '#tests/helpers/orders'
import {
  FAKE_NETWORK,
  FAKE_USDT,
  FAKE_WALLET,
  fakeFamily,
  fakeTransfer,
} from '#tests/helpers/fake_chain'
import { FakeProvider } from '#tests/helpers/fake_provider'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { merchantVerifiesCallback, orderParams, signed } from '#tests/helpers/merchant'
import { compatSign } from '#tests/helpers/compat_merchant'
import {
  OpenApiContract,
  openApiStructureValidator,
  resolvePointer,
  walk,
  type Answer,
  type CallOptions,
} from '#tests/helpers/openapi_contract'

/**
 * The OpenAPI document against the gateway: every documented path, method,
 * status and status_code is requested for real and its answer validated
 * against the document (JSON Schema 2020-12, Ajv), every route under
 * /payments/native/v1 and /pay is documented, and the callbacks merchants
 * receive match the document's webhooks. The last test fails if any
 * documented answer was not produced by the tests before it.
 */

const CREATE = '/payments/native/v1/order/create-transaction'
const QUERY = '/payments/native/v1/order/query'
const CONFIG = '/payments/native/v1/config'
const OPENAPI = '/payments/native/v1/openapi.json'
const SWITCH = '/pay/switch-network'
const SUBMIT = '/pay/submit-tx-hash/{trade_id}'
const UNKNOWN_TRADE_ID = 'NoSuchOrder00000000000'

/** The spec's error table, written here from the spec (not from the app's code). */
const SPEC_CODES = [
  200, 400, 401, 10001, 10002, 10003, 10004, 10005, 10006, 10007, 10008, 10009, 10010, 10011, 10012,
  10013, 10014, 10016, 10017, 10018, 10019,
]

let contract: OpenApiContract

const appUrl = () => String(process.env.APP_URL)

async function loadContract() {
  const response = await fetch(`${appUrl()}${OPENAPI}`)
  contract = new OpenApiContract(JSON.parse(await response.text()), appUrl())
}

/** A signed native request body (JSON). */
function signedBody(fields: Record<string, unknown>) {
  return signed({ pid: '1000', ...fields })
}

/** The same, as form fields. */
function signedForm(fields: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(signedBody(fields)).map(([name, value]) => [name, String(value)])
  )
}

const malformedJson = { raw: { body: '{"pid": "1000", ', contentType: 'application/json' } }
const oversized = (path: string) => ({
  raw: {
    body: JSON.stringify({ pid: '1000', name: 'x'.repeat(70 * 1024) }),
    contentType: 'application/json',
  },
  path,
})

/** Another network of the fake family, with USDT; a wallet unless told. */
async function addFakeNetwork(
  network: string,
  options: { enabled?: boolean; wallet?: boolean } = {}
) {
  const now = Date.now()
  await db.table('chains').insert({
    network,
    family: 'fake',
    display_name: network,
    chain_id: null,
    enabled: options.enabled ?? true,
    rpc_urls: '[]',
    confirmations: 1,
    scan_interval_seconds: 5,
    sort_order: 1001,
    created_at: now,
    updated_at: now,
  })
  await db.table('tokens').insert({
    network,
    symbol: 'USDT',
    contract: FAKE_USDT,
    decimals: 6,
    amount_precision: 2,
    enabled: true,
    created_at: now,
    updated_at: now,
  })
  if (options.wallet ?? true) {
    await db.table('wallets').insert({
      network,
      address: `fake:wallet-${network}`,
      enabled: true,
      note: '',
      created_at: now,
      updated_at: now,
    })
  }
  configCache.invalidate()
}

/**
 * Runs `work` while the database refuses connections (every knex client
 * of the default connection fails to acquire one, as with PostgreSQL
 * down): what a request answers then is the gateway's real rendering.
 */
async function whileDatabaseRefuses<T>(work: () => Promise<T>): Promise<T> {
  const connection = db.connection()
  const clients = new Set<any>([
    (connection.getWriteClient() as any).client,
    (connection.getReadClient() as any).client,
  ])
  const originals = new Map<any, unknown>()
  for (const client of clients) {
    originals.set(client, client.acquireConnection)
    client.acquireConnection = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
        code: 'ECONNREFUSED',
      })
    }
  }
  try {
    return await work()
  } finally {
    for (const [client, original] of originals) client.acquireConnection = original
  }
}

/** Asserts the answer's status and status_code (after the contract checked it). */
function expect(answer: Answer, status: number, statusCode?: number): Answer {
  if (
    answer.status !== status ||
    (statusCode !== undefined && answer.body?.status_code !== statusCode)
  ) {
    throw new Error(
      `expected HTTP ${status}${statusCode ? ` / ${statusCode}` : ''}, got ${answer.status}: ${JSON.stringify(answer.body)}`
    )
  }
  return answer
}

const call = (method: 'GET' | 'POST', template: string, options?: CallOptions) =>
  contract.call(method, template, options)
const switchTo = (tradeId: string, network: string, token = 'usdt') =>
  call('POST', SWITCH, { json: { trade_id: tradeId, network, token } })
const submit = (tradeId: string, reference: string) =>
  call('POST', SUBMIT, { params: { trade_id: tradeId }, json: { block_transaction_id: reference } })

test.group('OpenAPI contract', (group) => {
  const provider = new FakeProvider()
  const merchant = new MerchantServer()

  group.setup(async () => {
    await provider.start()
    await merchant.start()
    return async () => {
      await provider.stop()
      await merchant.stop()
    }
  })

  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await settings.set('rate_limit.query_per_minute', '0')
    merchant.reset()
    if (!contract) await loadContract()
  })

  test('the document: OpenAPI 3.1, every schema valid JSON Schema 2020-12, every reference resolved, servers from APP_URL, cacheable', async ({
    assert,
  }) => {
    const answer = expect(await call('GET', OPENAPI), 200)
    const doc = answer.body
    assert.equal(doc.openapi, '3.1.0')
    assert.deepEqual(
      doc.servers.map((server: any) => server.url),
      [appUrl()]
    )

    // The structure, by the official OpenAPI 3.1 JSON Schema; and the check is no formality.
    const validateStructure = openApiStructureValidator()
    assert.isTrue(validateStructure(doc), JSON.stringify(validateStructure.errors?.slice(0, 5)))
    const broken = structuredClone(doc)
    delete broken.paths[SWITCH].post.responses['200'].description
    broken.paths[CONFIG].get.respones = {}
    assert.isFalse(validateStructure(broken))

    // Every Schema Object compiles in strict mode (Ajv checks each against the 2020-12 meta-schema).
    const compiled = contract.compileEverySchema()
    assert.isAbove(compiled.length, 50)
    assert.throws(() => contract.schemaErrors({ type: 'strnig' }, ''))
    let references = 0
    for (const [node] of walk(doc)) {
      if (typeof node.$ref !== 'string') continue
      resolvePointer(doc, node.$ref) // throws, naming the reference, when it leads nowhere
      references++
    }
    assert.isAbove(references, 50)

    // Every operation has a unique operationId; every path parameter is declared.
    const operationIds = new Set<string>()
    for (const [template, item] of Object.entries<any>({ ...doc.paths, ...doc.webhooks })) {
      for (const operation of [item.get, item.post].filter(Boolean)) {
        assert.isFalse(operationIds.has(operation.operationId), operation.operationId)
        operationIds.add(operation.operationId)
        const declared = (operation.parameters ?? [])
          .map((parameter: any) => contract.deref(parameter))
          .filter((p: any) => p.in === 'path')
        const inTemplate = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1])
        assert.deepEqual(
          declared.map((p: any) => p.name),
          inTemplate,
          template
        )
      }
    }

    // The envelope's status_code lists exactly the spec's codes and the HTTP-level ones.
    const listed = doc.components.schemas.StatusCode.oneOf.map((member: any) => member.const)
    assert.sameMembers(listed, [...SPEC_CODES, 404, 413, 429])
    // Each code of the spec (but 10001, operators' only) is answered by some operation, under its HTTP status.
    for (const code of SPEC_CODES.filter((c) => c !== 200 && c !== 10001)) {
      const http = code === 401 ? '401' : '400'
      const answering = Object.values<any>(doc.paths).flatMap((item) =>
        [item.get, item.post]
          .filter(Boolean)
          .filter(
            (op: any) =>
              op.responses[http] && contract.statusCodesOf(op.responses[http]).includes(code)
          )
      )
      assert.isAbove(answering.length, 0, `no operation documents ${code} under HTTP ${http}`)
    }

    // The worked signing example of the introduction is right.
    const example =
      'amount=100&currency=cny&notify_url=https://shop.example/notify&order_id=A-1001&pid=1000'
    assert.include(doc.info.description, example)
    assert.include(
      doc.info.description,
      createHmac('sha256', 'demo-secret-please-change').update(example).digest('hex')
    )

    // Cacheable: the ETag revalidates.
    const etag = answer.headers.get('etag')!
    assert.match(answer.headers.get('cache-control')!, /public, max-age=\d+/)
    expect(await call('GET', OPENAPI, { headers: { 'if-none-match': etag } }), 304)
    expect(await call('GET', OPENAPI, { headers: { 'if-none-match': '"stale"' } }), 200)

    // servers follows APP_URL at request time.
    const configured = env.get('APP_URL')
    env.set('APP_URL', 'https://pay.example.test/')
    try {
      const moved = expect(await call('GET', OPENAPI), 200)
      assert.deepEqual(
        moved.body.servers.map((server: any) => server.url),
        ['https://pay.example.test']
      )
      assert.notEqual(moved.headers.get('etag'), etag)
    } finally {
      env.set('APP_URL', configured!)
    }
  })

  test('every route under /payments/native/v1 and /pay is documented, and every documented operation is routed', async ({
    assert,
  }) => {
    const routed = new Set<string>()
    for (const route of Object.values(router.toJSON()).flat()) {
      const pattern = route.pattern
      if (!pattern.startsWith('/payments/native/v1/') && !pattern.startsWith('/pay/')) continue
      const template = pattern.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
      for (const method of route.methods.filter((m) => m !== 'HEAD'))
        routed.add(`${method.toLowerCase()} ${template}`)
    }
    const documented = new Set<string>()
    for (const [template, item] of Object.entries<any>(contract.doc.paths)) {
      for (const method of ['get', 'post', 'put', 'patch', 'delete'])
        if (item[method]) documented.add(`${method} ${template}`)
    }
    assert.isAbove(routed.size, 10)
    assert.deepEqual(
      [...routed].filter((route) => !documented.has(route)),
      [],
      'routes missing from the document'
    )
    assert.deepEqual(
      [...documented].filter((route) => !routed.has(route)),
      [],
      'documented operations that are not routed'
    )
  })

  test('create: JSON and form bodies, every refusal code, 401, 413, 429, 503', async ({
    assert,
  }) => {
    const created = expect(
      await call('POST', CREATE, {
        json: signed(
          orderParams({ network: FAKE_NETWORK, redirect_url: 'https://shop.example/done' })
        ),
      }),
      200
    )
    assert.equal(created.body.data.status, 1)
    const placeholder = expect(
      await call('POST', CREATE, {
        form: signedForm({
          order_id: 'form-1',
          currency: 'cny',
          amount: '100.00',
          notify_url: 'https://shop.example/n',
          name: 'Mug',
          payment_type: 'Native',
        }),
      }),
      200
    )
    assert.equal(placeholder.body.data.status, 4)

    expect(
      await call('POST', CREATE, {
        json: signed(orderParams({ network: FAKE_NETWORK, currency: undefined })),
      }),
      400,
      400
    )
    const tokenAlone = signed(orderParams({ network: undefined }))
    expect(await call('POST', CREATE, { json: tokenAlone }), 400, 400)
    assert.isNotNull(
      contract.requestErrors('POST', CREATE, 'application/json', tokenAlone),
      'token without network'
    )
    expect(
      await call('POST', CREATE, {
        json: signed(orderParams({ network: FAKE_NETWORK, order_id: 'form-1' })),
      }),
      400,
      10002
    )
    await addFakeNetwork('fakebare', { wallet: false })
    expect(
      await call('POST', CREATE, { json: signed(orderParams({ network: 'fakebare' })) }),
      400,
      10003
    )
    expect(
      await call('POST', CREATE, {
        json: signed(orderParams({ network: FAKE_NETWORK, amount: 0.02 })),
      }),
      400,
      10004
    )
    expect(
      await call('POST', CREATE, {
        json: signed(orderParams({ network: FAKE_NETWORK, currency: 'eur' })),
      }),
      400,
      10006
    )
    expect(await call('POST', CREATE, malformedJson), 400, 10009)
    await addFakeNetwork('fakeoff', { enabled: false })
    expect(
      await call('POST', CREATE, { json: signed(orderParams({ network: 'fakeoff' })) }),
      400,
      10014
    )
    expect(
      await call('POST', CREATE, { json: signed(orderParams({ network: 'nowhere' })) }),
      400,
      10016
    )
    await settings.set('order.amount_max_steps', '1')
    expect(
      await call('POST', CREATE, { json: signed(orderParams({ network: FAKE_NETWORK })) }),
      400,
      10005
    )

    expect(
      await call('POST', CREATE, {
        json: { ...orderParams({ network: FAKE_NETWORK }), signature: 'f'.repeat(64) },
      }),
      401,
      401
    )
    expect(await call('POST', CREATE, oversized(CREATE)), 413, 413)

    await settings.set('rate_limit.create_per_minute', '1')
    expect(
      await call('POST', CREATE, {
        json: signed(orderParams({ token: undefined, network: undefined })),
      }),
      200
    )
    expect(
      await call('POST', CREATE, {
        json: signed(orderParams({ token: undefined, network: undefined })),
      }),
      429,
      429
    )
    await settings.set('rate_limit.create_per_minute', '0')

    const refused = await whileDatabaseRefuses(() =>
      call('POST', CREATE, { json: signed(orderParams({ token: undefined, network: undefined })) })
    )
    expect(refused, 503, 400)
  })

  test('query: waiting, paid through a child (form), every refusal code, 401, 413, 429, 503', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { redirect_url: 'https://shop.example/done' })
    const waiting = expect(
      await call('POST', QUERY, { json: signedBody({ trade_id: order.tradeId }) }),
      200
    )
    assert.isNull(waiting.body.data.child)
    assert.isNull(waiting.body.data.paid_at)

    await addFakeNetwork('fakenet2')
    const placeholder = await newPlaceholder(client, { order_id: 'query-ph' })
    expect(await switchTo(placeholder.tradeId, FAKE_NETWORK), 200)
    const child = expect(await switchTo(placeholder.tradeId, 'fakenet2'), 200)
    await paymentService.markPaid(
      (await Order.findByOrFail('trade_id', child.body.data.trade_id)).id,
      { reference: '0xchild-paid', source: 'scanner' }
    )
    const paid = expect(
      await call('POST', QUERY, { form: signedForm({ order_id: 'query-ph' }) }),
      200
    )
    assert.equal(paid.body.data.status, 2)
    assert.equal(paid.body.data.child.trade_id, child.body.data.trade_id)
    assert.isNumber(paid.body.data.paid_at)

    // Neither trade_id nor order_id (an empty one counts as absent): refused, by the gateway and by the document.
    for (const fields of [{}, { trade_id: '' }]) {
      const body = signedBody(fields)
      expect(await call('POST', QUERY, { json: body }), 400, 400)
      assert.isNotNull(
        contract.requestErrors('POST', QUERY, 'application/json', body),
        JSON.stringify(body)
      )
    }
    expect(
      await call('POST', QUERY, { json: signedBody({ trade_id: UNKNOWN_TRADE_ID }) }),
      400,
      10008
    )
    expect(await call('POST', QUERY, malformedJson), 400, 10009)
    expect(
      await call('POST', QUERY, {
        json: { pid: '1000', trade_id: order.tradeId, signature: 'f'.repeat(64) },
      }),
      401,
      401
    )
    expect(await call('POST', QUERY, oversized(QUERY)), 413, 413)

    await settings.set('rate_limit.query_per_minute', '1')
    expect(await call('POST', QUERY, { json: signedBody({ trade_id: order.tradeId }) }), 200)
    expect(await call('POST', QUERY, { json: signedBody({ trade_id: order.tradeId }) }), 429, 429)
    await settings.set('rate_limit.query_per_minute', '0')

    expect(
      await whileDatabaseRefuses(() =>
        call('POST', QUERY, { json: signedBody({ trade_id: order.tradeId }) })
      ),
      503,
      400
    )
  })

  test('config: 200 with an asset and the provider; 503 when the database cannot be reached', async ({
    assert,
  }) => {
    await provider.configure()
    const config = expect(await call('GET', CONFIG), 200)
    assert.deepInclude(config.body.data.supported_assets, {
      network: FAKE_NETWORK,
      display_name: 'Fake Net',
      tokens: ['USDT'],
    })
    assert.isTrue(config.body.data.provider.enabled)

    configCache.invalidate()
    settings.invalidate()
    expect(await whileDatabaseRefuses(() => call('GET', CONFIG)), 503, 400)
  })

  test('cashier reads: redirect, init, status, payment URI, progress (seen, then paid), return', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { redirect_url: 'https://shop.example/done' })
    const params = { trade_id: order.tradeId }
    const page = expect(await call('GET', '/pay/checkout-counter/{trade_id}', { params }), 301)
    assert.equal(page.headers.get('location'), `/cashier/${order.tradeId}`)

    expect(await call('GET', '/pay/checkout-counter-resp/{trade_id}', { params }), 200)
    expect(await call('GET', '/pay/check-status/{trade_id}', { params }), 200)
    const uri = expect(await call('GET', '/pay/payment-uri/{trade_id}', { params }), 200)
    assert.equal(uri.body.data.uri, `fake:${FAKE_WALLET}?amount=${order.actualAmount}`)
    const before = expect(await call('GET', '/pay/return/{trade_id}', { params }), 302)
    assert.equal(before.headers.get('location'), `/cashier/${order.tradeId}`)

    // Seen on chain, not yet deep enough: a sighting.
    await db.from('chains').where('network', FAKE_NETWORK).update({ confirmations: 5 })
    configCache.invalidate()
    fakeFamily.unconfirmed = [
      {
        reference: '0xseen',
        position: 'log:0',
        to: FAKE_WALLET,
        contract: FAKE_USDT,
        amount: order.actualAmount,
        timestamp: Date.now(),
        confirmations: 2,
        success: true,
      },
    ]
    const [report] = await chainScanner.scan({ network: FAKE_NETWORK })
    assert.isTrue(report.scanned, report.detail)
    const seen = expect(await call('GET', '/pay/payment-progress/{trade_id}', { params }), 200)
    assert.equal(seen.body.data.sighting.reference, '0xseen')

    await paymentService.markPaid(order.id, { reference: '0xseen', source: 'scanner' })
    const paid = expect(await call('GET', '/pay/payment-progress/{trade_id}', { params }), 200)
    assert.equal(paid.body.data.payment.reference, '0xseen')
    const back = expect(await call('GET', '/pay/return/{trade_id}', { params }), 302)
    assert.equal(back.headers.get('location'), 'https://shop.example/done')

    const unknown = { params: { trade_id: UNKNOWN_TRADE_ID } }
    for (const template of [
      '/pay/checkout-counter-resp/{trade_id}',
      '/pay/check-status/{trade_id}',
      '/pay/payment-uri/{trade_id}',
      '/pay/payment-progress/{trade_id}',
    ]) {
      expect(await call('GET', template, unknown), 400, 10008)
    }
    const placeholder = await newPlaceholder(client)
    const choosing = expect(
      await call('GET', '/pay/checkout-counter-resp/{trade_id}', {
        params: { trade_id: placeholder.tradeId },
      }),
      200
    )
    assert.equal(choosing.body.data.status, 4)
    expect(
      await call('GET', '/pay/payment-uri/{trade_id}', {
        params: { trade_id: placeholder.tradeId },
      }),
      400,
      10013
    )
  })

  test('submit-tx-hash: paid, and every refusal code', async ({ client, assert }) => {
    const order = await newOrder(client)
    fakeTransfer('0xpaid-by-payer', order.actualAmount)
    const paid = expect(await submit(order.tradeId, '0xpaid-by-payer'), 200)
    assert.equal(paid.body.data.status, 2)

    const second = await newOrder(client)
    expect(await submit(second.tradeId, 'short'), 400, 400)
    fakeTransfer('0xpaid-by-payer', second.actualAmount)
    expect(await submit(second.tradeId, '0xpaid-by-payer'), 400, 10007)
    expect(await submit(UNKNOWN_TRADE_ID, '0xpaid-by-payer'), 400, 10008)
    expect(
      await call('POST', SUBMIT, { params: { trade_id: second.tradeId }, ...malformedJson }),
      400,
      10009
    )
    expect(await submit((await newPlaceholder(client)).tradeId, '0xpaid-by-payer'), 400, 10013)
    expect(
      await call('POST', SUBMIT, { params: { trade_id: second.tradeId }, ...oversized(SUBMIT) }),
      413,
      413
    )

    // The scanner pays the order while the payer's transaction is being verified.
    fakeTransfer('0xreported', second.actualAmount)
    const verify = fakeFamily.verifyReference
    fakeFamily.verifyReference = async function (
      this: typeof fakeFamily,
      ...args: Parameters<typeof verify>
    ) {
      await paymentService.markPaid(second.id, {
        reference: '0xfound-by-scanner',
        source: 'scanner',
      })
      return verify.apply(this, args)
    }
    try {
      expect(await submit(second.tradeId, '0xreported'), 400, 10010)
    } finally {
      fakeFamily.verifyReference = verify
    }
  })

  test('switch-network: JSON and form, every refusal code', async ({ client, assert }) => {
    await provider.configure()
    await addFakeNetwork('fakenet2')
    const placeholder = await newPlaceholder(client)
    const onChain = expect(await switchTo(placeholder.tradeId, FAKE_NETWORK), 200)
    assert.equal(onChain.body.data.trade_id, placeholder.tradeId)
    const hosted = expect(
      await call('POST', SWITCH, {
        form: {
          trade_id: (await newPlaceholder(client)).tradeId,
          network: 'provider',
          token: 'usdt',
        },
      }),
      200
    )
    assert.match(hosted.body.data.payment_url, /^https:\/\/pay\.example\//)

    expect(
      await call('POST', SWITCH, {
        json: { trade_id: placeholder.tradeId, network: FAKE_NETWORK },
      }),
      400,
      400
    )
    await addFakeNetwork('fakebare', { wallet: false })
    expect(await switchTo((await newPlaceholder(client)).tradeId, 'fakebare'), 400, 10003)
    expect(
      await switchTo((await newPlaceholder(client, { amount: 0.02 })).tradeId, FAKE_NETWORK),
      400,
      10004
    )
    expect(
      await switchTo((await newPlaceholder(client, { currency: 'eur' })).tradeId, FAKE_NETWORK),
      400,
      10006
    )
    expect(await switchTo(UNKNOWN_TRADE_ID, FAKE_NETWORK), 400, 10008)
    expect(await call('POST', SWITCH, malformedJson), 400, 10009)

    const child = expect(await switchTo(placeholder.tradeId, 'fakenet2'), 200)
    expect(await switchTo(placeholder.tradeId, 'provider'), 400, 10011)
    expect(await switchTo(child.body.data.trade_id, FAKE_NETWORK), 400, 10012)
    const paid = await newOrder(client)
    await paymentService.markPaid(paid.id, { reference: '0xpaid', source: 'scanner' })
    expect(await switchTo(paid.tradeId, 'fakenet2'), 400, 10013)
    await addFakeNetwork('fakeoff', { enabled: false })
    expect(await switchTo((await newPlaceholder(client)).tradeId, 'fakeoff'), 400, 10014)
    expect(await switchTo((await newPlaceholder(client)).tradeId, 'nowhere'), 400, 10016)

    const forProvider = await newPlaceholder(client)
    await settings.set('provider.allow_tokens', 'TRX')
    expect(await switchTo(forProvider.tradeId, 'provider', 'usdt'), 400, 10019)
    await settings.set('provider.shop_token', '')
    expect(await switchTo(forProvider.tradeId, 'provider', 'trx'), 400, 10018)
    await settings.set('provider.enabled', 'false')
    expect(await switchTo(forProvider.tradeId, 'provider', 'trx'), 400, 10017)
    expect(await call('POST', SWITCH, oversized(SWITCH)), 413, 413)

    // Every amount step taken on the only wallet: 10005.
    await settings.set('order.amount_max_steps', '1')
    await newOrder(client, { amount: 200 })
    expect(
      await switchTo((await newPlaceholder(client, { amount: 200 })).tradeId, FAKE_NETWORK),
      400,
      10005
    )

    // The parent is paid while its child is being priced.
    // An amount of its own: every step of the amounts above is taken (amount_max_steps 1).
    const racing = await newOrder(client, { amount: 300 })
    const priceOnChain = orderService.priceOnChain
    orderService.priceOnChain = async (...args: Parameters<typeof priceOnChain>) => {
      await paymentService.markPaid(racing.id, { reference: '0xpaid-meanwhile', source: 'scanner' })
      return priceOnChain.apply(orderService, args)
    }
    try {
      expect(await switchTo(racing.tradeId, 'fakenet2'), 400, 10010)
    } finally {
      orderService.priceOnChain = priceOnChain
    }
  })

  test('every /pay endpoint over its rate limit: 429 with Retry-After', async ({ client }) => {
    const order = await newOrder(client)
    await settings.set('rate_limit.cashier_per_minute', '1')
    const params = { trade_id: order.tradeId }
    expect(await call('GET', '/pay/check-status/{trade_id}', { params }), 200)
    for (const template of [
      '/pay/checkout-counter/{trade_id}',
      '/pay/checkout-counter-resp/{trade_id}',
      '/pay/check-status/{trade_id}',
      '/pay/payment-uri/{trade_id}',
      '/pay/payment-progress/{trade_id}',
      '/pay/return/{trade_id}',
    ]) {
      expect(await call('GET', template, { params }), 429, 429)
    }
    expect(await submit(order.tradeId, '0xsomething'), 429, 429)
    expect(await switchTo(order.tradeId, FAKE_NETWORK), 429, 429)
  })

  test('every /pay endpoint that reads an order: 503 with Retry-After while the database cannot be reached', async () => {
    const params = { trade_id: UNKNOWN_TRADE_ID }
    await whileDatabaseRefuses(async () => {
      for (const template of [
        '/pay/checkout-counter-resp/{trade_id}',
        '/pay/check-status/{trade_id}',
        '/pay/payment-uri/{trade_id}',
        '/pay/payment-progress/{trade_id}',
      ]) {
        expect(await call('GET', template, { params }), 503, 400)
      }
      expect(await submit(UNKNOWN_TRADE_ID, '0xsomething'), 503, 400)
      expect(await switchTo(UNKNOWN_TRADE_ID, FAKE_NETWORK), 503, 400)
    })
  })

  test('the former create routes answer the documented 404', async ({ assert }) => {
    const notFound = contract.doc.components.responses.NotFound
    for (const path of [
      '/api/v1/order/create-transaction',
      '/payments/epusdt/v1/order/create-transaction',
    ]) {
      const response = await fetch(`${appUrl()}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept': 'application/json' },
        body: JSON.stringify(signed(orderParams())),
      })
      const text = await response.text()
      assert.equal(response.status, 404)
      contract.checkResponse(`POST ${path} → 404`, notFound, {
        status: 404,
        headers: response.headers,
        text,
        body: JSON.parse(text),
      })
    }
  })

  test('webhooks: the native callback (POST JSON) and the compat callback (GET query) merchants receive match the document', async ({
    client,
    assert,
  }) => {
    const doc = contract.doc
    const native = await newOrder(client, {
      notify_url: merchant.notifyUrl,
      order_id: 'hook-native',
    })
    await paymentService.markPaid(native.id, { reference: '0xhook-native', source: 'scanner' })
    const compat = await newOrder(client, {
      notify_url: merchant.notifyUrl,
      order_id: 'hook-compat',
      payment_type: 'Compat',
      name: 'Blue mug',
    })
    await paymentService.markPaid(compat.id, { reference: '0xhook-compat', source: 'scanner' })
    const report = await callbackDeliverer.runOnce()
    assert.equal(report.delivered, 2)

    const post = merchant.requests.find((request) => request.method === 'POST')!
    const nativeHook = doc.webhooks.nativePaymentCallback.post
    assert.equal(post.headers['content-type']?.split(';')[0], 'application/json')
    assert.property(nativeHook.requestBody.content, 'application/json')
    const body = JSON.parse(post.body)
    assert.isNull(
      contract.schemaErrors(nativeHook.requestBody.content['application/json'].schema, body)
    )
    assert.equal(body.order_id, 'hook-native')
    assert.isTrue(
      merchantVerifiesCallback(body),
      'the native signature rule of the document verifies it'
    )

    const get = merchant.requests.find((request) => request.method === 'GET')!
    assert.isUndefined(doc.webhooks.compatPaymentCallback.post)
    const query = new URL(get.url, 'http://merchant.test').searchParams
    const parameters = doc.webhooks.compatPaymentCallback.get.parameters.map((parameter: any) =>
      contract.deref(parameter)
    )
    for (const parameter of parameters) {
      assert.equal(parameter.in, 'query')
      const value = query.get(parameter.name)
      if (value === null) {
        assert.isFalse(parameter.required, `required query parameter ${parameter.name} missing`)
        continue
      }
      assert.isNull(contract.schemaErrors(parameter.schema, value), parameter.name)
    }
    assert.sameMembers(
      [...new Set(query.keys())],
      parameters.map((parameter: any) => parameter.name),
      'the callback sends exactly the documented parameters'
    )
    assert.equal(query.get('out_trade_no'), 'hook-compat')
    const fields = Object.fromEntries(query)
    assert.equal(compatSign(fields), fields.sign, 'the compat signature rule verifies it')

    // The documented acknowledgement is the gateway's.
    for (const hook of [nativeHook, doc.webhooks.compatPaymentCallback.get]) {
      const ack = hook.responses['200'].content['text/plain'].schema
      for (const reply of ['ok', 'OK', 'success', ' Success\n', 'okay', 'fail', '', 'successful']) {
        assert.equal(
          contract.schemaErrors(ack, reply) === null,
          isAcknowledged(200, reply),
          JSON.stringify(reply)
        )
      }
    }
  })

  test('every documented answer was produced by a real request', async ({ assert }) => {
    assert.isAbove(contract.documented().length, 60)
    assert.deepEqual(contract.unproduced(), [])
  })
})
