import apiKeyAdmin from '#services/operators/api_key_admin'
import { test } from '@japa/runner'
import { randomBytes } from 'node:crypto'
import type { ApiClient } from '@japa/api-client'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import { CREATE_PATH, TEST_SECRET, orderParams, signed } from '#tests/helpers/merchant'
import { SUBMIT_PATH, compatParams, compatSigned } from '#tests/helpers/compat_merchant'
import { CLOSED_URL, startServerProcess, type RunningServer } from '#tests/helpers/processes'

const OTHER_SECRET = 'secret-of-2001-abcdef'
const NOTIFY_PATH = '/payments/provider/v1/notify'
const UNKNOWN_ORDER = '/pay/check-status/AAAAAAAAAAAAAAAAAAAAAA'

/** A signed create from client IP `ip` (X-Forwarded-For, believed from loopback by default). */
function createFrom(
  client: ApiClient,
  ip: string,
  params: Record<string, unknown> = {},
  secret = TEST_SECRET
) {
  return client
    .post(CREATE_PATH)
    .header('x-forwarded-for', ip)
    .json(signed(orderParams(params), secret))
    .accept('json')
}

async function statusesOf(requests: (() => Promise<{ status(): number }>)[]) {
  const statuses: number[] = []
  for (const request of requests) statuses.push((await request()).status())
  return statuses
}

test.group('Request limits: order creation per merchant', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await makeTronPayable()
    await settings.set('rate_limit.create_per_minute', '2')
  })

  test('two pids from one IP each get their own budget', async ({ client, assert }) => {
    await apiKeyAdmin.create({ pid: '2001', secret: OTHER_SECRET })
    const ip = '198.51.100.10'
    const first = await statusesOf([
      () => createFrom(client, ip),
      () => createFrom(client, ip),
      () => createFrom(client, ip),
    ])
    const second = await statusesOf([
      () => createFrom(client, ip, { pid: '2001' }, OTHER_SECRET),
      () => createFrom(client, ip, { pid: '2001' }, OTHER_SECRET),
      () => createFrom(client, ip, { pid: '2001' }, OTHER_SECRET),
    ])
    assert.deepEqual(first, [200, 200, 429])
    assert.deepEqual(second, [200, 200, 429])
  })

  test('the same pid from several IPs shares one budget', async ({ client, assert }) => {
    const statuses = await statusesOf([
      () => createFrom(client, '198.51.100.1'),
      () => createFrom(client, '198.51.100.2'),
      () => createFrom(client, '198.51.100.3'),
      () => createFrom(client, '198.51.100.1'),
    ])
    assert.deepEqual(statuses, [200, 200, 429, 429])
    const limited = await createFrom(client, '198.51.100.4')
    assert.equal(limited.body().status_code, 429)
    assert.isString(limited.body().request_id)
    assert.isAbove(Number(limited.header('retry-after')), 0)
  })

  test('compat submit.php orders draw on the same per-pid budget', async ({ client, assert }) => {
    const compat = (ip: string) =>
      client
        .post(SUBMIT_PATH)
        .header('x-forwarded-for', ip)
        .form(compatSigned(compatParams({ type: 'usdt.tron' })))
        .redirects(0)
        .accept('json')
    const statuses = await statusesOf([
      () => createFrom(client, '198.51.100.1'),
      () => compat('198.51.100.2'),
      () => compat('198.51.100.3'),
    ])
    assert.deepEqual(statuses, [200, 302, 429])
  })

  test('failed signatures are counted per client IP, never against the pid', async ({
    client,
    assert,
  }) => {
    const forged = (ip: string) => createFrom(client, ip, {}, 'not-the-secret-of-pid-1000')
    // An outsider who knows pid 1000 exhausts only his own IP's budget...
    const attacker = await statusesOf([
      () => forged('203.0.113.66'),
      () => forged('203.0.113.66'),
      () => forged('203.0.113.66'),
      () => createFrom(client, '203.0.113.66'),
    ])
    assert.deepEqual(attacker, [401, 401, 429, 429])
    // ...the merchant's own budget is untouched, and other IPs have theirs.
    const merchant = await statusesOf([
      () => createFrom(client, '198.51.100.20'),
      () => createFrom(client, '198.51.100.20'),
      () => forged('203.0.113.67'),
    ])
    assert.deepEqual(merchant, [200, 200, 401])
  })

  test('a limit of 0 turns the create limit off', async ({ client, assert }) => {
    await settings.set('rate_limit.create_per_minute', '0')
    const statuses = await statusesOf(
      Array.from({ length: 4 }, () => () => createFrom(client, '198.51.100.1'))
    )
    assert.deepEqual(statuses, [200, 200, 200, 200])
  })
})

test.group('Request limits: cashier and provider notify per client IP', (group) => {
  group.each.setup(() => resetDatabase())

  test('the cashier limit is per client IP', async ({ client, assert }) => {
    await settings.set('rate_limit.cashier_per_minute', '2')
    const from = (ip: string) => () =>
      client.get(UNKNOWN_ORDER).header('x-forwarded-for', ip).accept('json')
    const statuses = await statusesOf([
      from('198.51.100.1'),
      from('198.51.100.1'),
      from('198.51.100.1'),
      from('198.51.100.2'),
    ])
    assert.deepEqual(statuses, [400, 400, 429, 400])
  })

  test('the provider notify endpoint is limited per client IP', async ({ assert }) => {
    await settings.set('rate_limit.notify_per_minute', '2')
    const post = async (ip: string) => {
      const response = await fetch(`${process.env.APP_URL}${NOTIFY_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
        body: 'id=nobody&sign=x',
      })
      return {
        status: response.status,
        text: await response.text(),
        retryAfter: response.headers.get('retry-after'),
      }
    }
    const first = await post('198.51.100.1')
    const second = await post('198.51.100.1')
    const third = await post('198.51.100.1')
    const otherIp = await post('198.51.100.2')
    assert.deepEqual(
      [first.status, second.status, third.status, otherIp.status],
      [400, 400, 429, 400]
    )
    assert.equal(third.text, 'fail')
    assert.isAbove(Number(third.retryAfter), 0)
  })
})

/** Posts a signed create to a server process. */
async function createOn(server: RunningServer, pid: string, secret: string) {
  const response = await fetch(`${server.url}${CREATE_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'accept': 'application/json' },
    body: JSON.stringify(signed(orderParams({ pid }), secret)),
  })
  await response.arrayBuffer()
  return response.status
}

test.group('Request limits: shared by every process', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await makeTronPayable()
  })

  for (const store of ['database', 'redis'] as const) {
    test(`the ${store} store: one pid's budget is shared by two server processes`, async ({
      assert,
      cleanup,
    }) => {
      // A pid of its own, so that concurrent runs sharing one Redis never meet.
      const pid = `p${randomBytes(6).toString('hex')}`
      const secret = `secret-${randomBytes(12).toString('hex')}`
      await apiKeyAdmin.create({ pid, secret })
      await settings.set('rate_limit.store', store)
      await settings.set('rate_limit.create_per_minute', '3')
      const [first, second] = await Promise.all([startServerProcess(), startServerProcess()])
      cleanup(async () => {
        await Promise.all([first.stop(), second.stop()])
      })

      const statuses = []
      for (const server of [first, second, first, second, first])
        statuses.push(await createOn(server, pid, secret))
      assert.deepEqual(statuses, [200, 200, 200, 429, 429])
    }).timeout(60_000)
  }

  test('Redis unreachable: requests are still served, counted in memory, and the failure is logged', async ({
    assert,
    cleanup,
  }) => {
    await settings.set('rate_limit.store', 'redis')
    await settings.set('rate_limit.cashier_per_minute', '2')
    const server = await startServerProcess({ REDIS_PORT: new URL(CLOSED_URL).port })
    cleanup(() => server.stop())
    const statuses = []
    for (let index = 0; index < 3; index++)
      statuses.push((await fetch(`${server.url}${UNKNOWN_ORDER}`)).status)
    assert.deepEqual(statuses, [400, 400, 429])
    assert.include(
      server.output(),
      'rate-limit store \\"redis\\" failed; counting requests in memory'
    )
  }).timeout(60_000)
})
