import { test } from '@japa/runner'
import { resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import { CREATE_PATH, orderParams, signed } from '#tests/helpers/merchant'
import { streamBody, trickle, type StreamedExchange } from '#tests/helpers/raw_http'
import { startServerProcess } from '#tests/helpers/processes'
import { httpServerOptions } from '#support/http/http_server_options'

const NOTIFY_PATH = '/payments/provider/v1/notify'
const MB = 1024 * 1024
/** A multipart body with no part in it: the boundary never appears. */
const JUNK_MULTIPART = 'multipart/form-data; boundary=----never-seen'

function appUrl() {
  return process.env.APP_URL!
}

/**
 * The answer came while the body was still being sent, and the server then
 * dropped the connection instead of reading the rest.
 */
function assertCutEarly(assert: any, exchange: StreamedExchange, total: number) {
  assert.isNotNull(exchange.sentBeforeAnswer, 'no answer')
  assert.isBelow(
    exchange.sentBeforeAnswer!,
    total / 4,
    'answered only after most of the body was sent'
  )
  assert.isTrue(exchange.cutByServer, 'the server read the whole body')
  assert.equal(exchange.headers['connection'], 'close')
}

function assertEnvelope(assert: any, exchange: StreamedExchange, statusCode: number) {
  const body = JSON.parse(exchange.body)
  assert.deepEqual(Object.keys(body).sort(), ['data', 'message', 'request_id', 'status_code'])
  assert.equal(body.status_code, statusCode)
  assert.isNotEmpty(body.request_id)
  return body
}

test.group('Hostile bodies are cut early', (group) => {
  group.each.setup(() => resetDatabase())

  test('a 50 MB multipart body on create-transaction: 413 before it is sent, connection dropped', async ({
    assert,
  }) => {
    const total = 50 * MB
    const exchange = await streamBody(appUrl(), {
      path: CREATE_PATH,
      contentType: JUNK_MULTIPART,
      total,
    })
    assert.equal(exchange.status, 413)
    assertEnvelope(assert, exchange, 413)
    assertCutEarly(assert, exchange, total)
  }).timeout(40_000)

  test('a chunked multipart body (no length) on create-transaction is not read: 10009, connection dropped', async ({
    assert,
  }) => {
    const total = 50 * MB
    const exchange = await streamBody(appUrl(), {
      path: CREATE_PATH,
      contentType: JUNK_MULTIPART,
      total,
      chunked: true,
    })
    assert.equal(exchange.status, 400)
    const body = assertEnvelope(assert, exchange, 10009)
    assert.match(body.message, /multipart\/form-data is not accepted here/)
    assertCutEarly(assert, exchange, total)
  }).timeout(40_000)

  test('a chunked JSON body is cut at 64 KB with 413, connection dropped', async ({ assert }) => {
    const total = 50 * MB
    const exchange = await streamBody(appUrl(), {
      path: CREATE_PATH,
      contentType: 'application/json',
      total,
      chunked: true,
    })
    assert.equal(exchange.status, 413)
    assertEnvelope(assert, exchange, 413)
    assertCutEarly(assert, exchange, total)
  }).timeout(40_000)

  test('a body of a type nobody parses on an unknown route is not drained either', async ({
    assert,
  }) => {
    const total = 50 * MB
    const exchange = await streamBody(appUrl(), {
      path: '/no/such/route',
      contentType: 'application/octet-stream',
      total,
      chunked: true,
    })
    assert.equal(exchange.status, 404)
    assertEnvelope(assert, exchange, 404)
    assertCutEarly(assert, exchange, total)
  }).timeout(40_000)

  test('a JSON body over the limit is 413 in the envelope', async ({ assert }) => {
    const response = await fetch(`${appUrl()}${CREATE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept': 'application/json' },
      body: JSON.stringify({ pid: '1000', name: 'x'.repeat(70 * 1024) }),
    })
    assert.equal(response.status, 413)
    assert.equal(response.headers.get('connection'), 'close')
    const body = (await response.json()) as any
    assert.equal(body.status_code, 413)
    assert.equal(body.message, 'Request body too large')
    assert.equal(body.request_id, response.headers.get('x-request-id'))
  })

  test('a body just under the limit is still read and answered normally', async ({ assert }) => {
    await makeTronPayable()
    const params = signed(orderParams({ name: 'n'.repeat(60 * 1024) }))
    const response = await fetch(`${appUrl()}${CREATE_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept': 'application/json' },
      body: JSON.stringify(params),
    })
    const body = (await response.json()) as any
    // Refused by validation (name too long), not by size: the body was read.
    assert.equal(response.status, 400)
    assert.equal(body.status_code, 400)
    assert.match(body.message, /name/)
    assert.notEqual(response.headers.get('connection'), 'close')
  })

  test('a small multipart body on create-transaction is refused with 10009, saying what to send', async ({
    assert,
  }) => {
    await makeTronPayable()
    const form = new FormData()
    for (const [key, value] of Object.entries(signed(orderParams())))
      form.append(key, String(value))
    const response = await fetch(`${appUrl()}${CREATE_PATH}`, {
      method: 'POST',
      headers: { accept: 'application/json' },
      body: form,
    })
    assert.equal(response.status, 400)
    const body = (await response.json()) as any
    assert.equal(body.status_code, 10009)
    assert.equal(
      body.message,
      'Parameters cannot be parsed: multipart/form-data is not accepted here: send JSON or application/x-www-form-urlencoded'
    )
  })

  test('provider notify: a chunked multipart body with no part is cut at the limit (413 fail)', async ({
    assert,
  }) => {
    const total = 50 * MB
    const exchange = await streamBody(appUrl(), {
      path: NOTIFY_PATH,
      contentType: JUNK_MULTIPART,
      total,
      chunked: true,
    })
    assert.equal(exchange.status, 413)
    assert.equal(exchange.body, 'fail')
    assertCutEarly(assert, exchange, total)
  }).timeout(40_000)

  test('provider notify: a multipart body declaring more than the limit is refused unread (413 fail)', async ({
    assert,
  }) => {
    const total = 50 * MB
    const exchange = await streamBody(appUrl(), {
      path: NOTIFY_PATH,
      contentType: JUNK_MULTIPART,
      total,
    })
    assert.equal(exchange.status, 413)
    assert.equal(exchange.body, 'fail')
    assertCutEarly(assert, exchange, total)
  }).timeout(40_000)

  test('provider notify: a chunked body without content type is cut at the limit (413 fail)', async ({
    assert,
  }) => {
    const total = 50 * MB
    const exchange = await streamBody(appUrl(), {
      path: NOTIFY_PATH,
      contentType: null,
      total,
      chunked: true,
    })
    assert.equal(exchange.status, 413)
    assert.equal(exchange.body, 'fail')
    assertCutEarly(assert, exchange, total)
  }).timeout(40_000)
})

test.group('Connections closed after the answer', () => {
  test('the server keeps running and logs the client address of each', async ({
    assert,
    cleanup,
  }) => {
    const server = await startServerProcess({ LOG_LEVEL: 'info' })
    cleanup(() => server.stop())
    for (let index = 0; index < 10; index++) {
      const exchange = await streamBody(server.url, {
        path: `/closed/${index}`,
        contentType: index % 2 ? JUNK_MULTIPART : 'application/octet-stream',
        total: 4 * MB,
        chunked: index % 2 === 0,
      })
      assert.equal(exchange.headers['connection'], 'close')
    }
    assert.equal((await fetch(`${server.url}/payments/native/v1/config`)).status, 200)
    assert.isNull(server.process.exitCode, server.output())
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.includes('"url":"/closed/'))
    assert.lengthOf(lines, 10, server.output())
    for (const line of lines) assert.equal(JSON.parse(line).ip, '127.0.0.1')
  }).timeout(60_000)
})

test.group('Slow clients are dropped', () => {
  test('default timeouts: headers within 10 s, the request within 30 s, keep-alive 5 s', ({
    assert,
  }) => {
    const options = httpServerOptions()
    assert.equal(options.headersTimeout, 10_000)
    assert.equal(options.requestTimeout, 30_000)
    assert.equal(options.keepAliveTimeout, 5_000)
    assert.isAtMost(options.connectionsCheckingInterval!, 1000)
  })

  test('a client sending its headers slowly, or its body, is dropped at the configured timeout', async ({
    assert,
    cleanup,
  }) => {
    const server = await startServerProcess({
      HTTP_HEADERS_TIMEOUT: '1',
      HTTP_REQUEST_TIMEOUT: '2',
    })
    cleanup(() => server.stop())
    const host = new URL(server.url).host

    const [slowHeaders, slowBody] = await Promise.all([
      // One header byte every 200 ms: never done before the 1 s limit.
      trickle(server.url, {
        slowly: `GET /payments/native/v1/config HTTP/1.1\r\nHost: ${host}\r\nX-Slow: ${'a'.repeat(100)}\r\n\r\n`,
        intervalMs: 200,
      }),
      // Headers at once, then one body byte every 100 ms: not done within 2 s.
      trickle(server.url, {
        immediately: `POST ${CREATE_PATH} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
        slowly: '{'.repeat(100),
        intervalMs: 100,
      }),
    ])
    assert.isFalse(slowHeaders.sentAll)
    assert.isAtLeast(slowHeaders.closedAfterMs, 900)
    assert.isBelow(slowHeaders.closedAfterMs, 4000)
    assert.match(slowHeaders.answer, /^HTTP\/1\.1 408/)
    assert.isFalse(slowBody.sentAll)
    assert.isAtLeast(slowBody.closedAfterMs, 1900)
    assert.isBelow(slowBody.closedAfterMs, 5000)
    assert.match(slowBody.answer, /^HTTP\/1\.1 408/)

    // A normal client is served.
    const response = await fetch(`${server.url}/payments/native/v1/config`)
    assert.equal(response.status, 200)
  }).timeout(60_000)
})
