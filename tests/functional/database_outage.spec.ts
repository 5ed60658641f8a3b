import { test } from '@japa/runner'
import { createRequire } from 'node:module'
import app from '@adonisjs/core/services/app'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import { CREATE_PATH, createOrder, orderParams, signed } from '#tests/helpers/merchant'
import { startServerProcess } from '#tests/helpers/processes'
import { TcpProxy, send, waitFor } from '#tests/helpers/ops'
import { isDatabaseUnavailable } from '#support/database/database_unavailable'
import { sqliteWriter } from '#services/prepared_statements'

/** better-sqlite3 ships no types; only exec/close/inTransaction are used here. */
type SqliteHandle = { exec(sql: string): void; close(): void; inTransaction: boolean }
const SqliteDatabase = createRequire(import.meta.url)('better-sqlite3') as new (
  file: string
) => SqliteHandle

function createBody() {
  return JSON.stringify(signed(orderParams({ amount: 100 })))
}

/** Which database this run is on (bin/test.ts: DB_CONNECTION, SQLite by default). */
const onPostgres = process.env.DB_CONNECTION === 'pg'

test.group('Database outage', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await makeTronPayable()
    await settings.set('rate_limit.create_per_minute', '0')
    await settings.set('rate_limit.cashier_per_minute', '0')
  })

  test('PostgreSQL unreachable: 503 + Retry-After in the envelope, /health/ready 503, live 200; recovers alone', async ({
    assert,
    cleanup,
  }) => {
    const proxy = await new TcpProxy(
      process.env.PG_HOST ?? '127.0.0.1',
      Number(process.env.PG_PORT ?? 5432)
    ).up()
    cleanup(() => proxy.down())
    const server = await startServerProcess({ PG_PORT: String(proxy.port) })
    cleanup(() => server.stop())
    const url = (path: string) => `${server.url}${path}`

    assert.equal((await send(url('/health/ready'))).status, 200)
    const before = await send(url(CREATE_PATH), { method: 'POST', body: createBody() })
    assert.equal(before.status, 200, before.body)
    const tradeId = JSON.parse(before.body).data.trade_id

    await proxy.down()

    const refused = await send(url(CREATE_PATH), { method: 'POST', body: createBody() })
    assert.equal(refused.status, 503, refused.body)
    assert.equal(refused.headers['retry-after'], '5')
    const envelope = JSON.parse(refused.body)
    assert.deepEqual(Object.keys(envelope).sort(), ['data', 'message', 'request_id', 'status_code'])
    assert.equal(envelope.status_code, 400)
    assert.equal(
      envelope.message,
      'Service temporarily unavailable: the database cannot be reached'
    )
    assert.equal(envelope.request_id, refused.headers['x-request-id'])

    // A cashier read too (its settings are cached, its order is not).
    const status = await send(url(`/pay/check-status/${tradeId}`))
    assert.equal(status.status, 503, status.body)
    assert.equal(status.headers['retry-after'], '5')

    let ready = await send(url('/health/ready'))
    await waitFor(async () => {
      ready = await send(url('/health/ready'))
      return ready.status === 503
    }, 'ready to answer 503')
    assert.equal(JSON.parse(ready.body).checks.database, 'unreachable')
    assert.equal(JSON.parse(ready.body).ready, false)
    assert.equal((await send(url('/health/live'))).status, 200)
    // The console: a 503 page in plain words.
    const adminPage = await send(url('/admin/login'), { headers: { accept: 'text/html' } })
    assert.equal(adminPage.status, 503, adminPage.body)
    assert.equal(adminPage.headers['retry-after'], '5')
    assert.include(adminPage.body, 'Database unavailable')
    assert.notInclude(
      server.stdout() + server.stderr(),
      '"level":50',
      'an outage is a warning, not an error trace'
    )

    await proxy.up()

    await waitFor(async () => (await send(url('/health/ready'))).status === 200, 'ready again')
    const after = await send(url(CREATE_PATH), { method: 'POST', body: createBody() })
    assert.equal(after.status, 200, after.body)
    assert.equal((await send(url(`/pay/check-status/${tradeId}`))).status, 200)
  })
    .timeout(60_000)
    .skip(!onPostgres, 'PostgreSQL only (the SQLite run has its own case)')

  test('SQLite: a write lock held past busy_timeout answers 503 + Retry-After, other requests are answered meanwhile, then the next create succeeds', async ({
    client,
    assert,
    cleanup,
  }) => {
    const holder = new SqliteDatabase(app.makePath(process.env.SQLITE_PATH!))
    cleanup(() => {
      if (holder.inTransaction) holder.exec('ROLLBACK')
      holder.close()
    })
    // A first create writes the key's last_used_at (on the HTTP thread's connection, once a minute).
    ;(await createOrder(client, orderParams({ amount: 50 }))).assertStatus(200)
    holder.exec('BEGIN IMMEDIATE')

    // The create waits for the lock on SQLite's writer thread, not on the HTTP thread: other
    // requests are answered meanwhile (on the HTTP thread, busy_timeout stopped every request for 10 s).
    const finished: string[] = []
    const pending = createOrder(client, orderParams()).then(
      (response) => (finished.push('create'), response)
    )
    await waitFor(() => sqliteWriter.pending === 1, 'the create handed to the writer thread')
    const live = await client.get('/health/live')
    finished.push('live')
    live.assertStatus(200)
    const refused = await pending
    assert.deepEqual(finished, ['live', 'create'])
    refused.assertStatus(503)
    assert.equal(refused.header('retry-after'), '5')
    assert.equal(refused.body().status_code, 400)
    assert.equal(
      refused.body().message,
      'Service temporarily unavailable: the database cannot be reached'
    )

    holder.exec('ROLLBACK')
    const created = await createOrder(client, orderParams())
    created.assertStatus(200)
  })
    .timeout(40_000)
    .skip(onPostgres, 'SQLite only (the PostgreSQL run has its own case)')
})

test.group('Database outage: which errors are the database being unreachable', () => {
  test('connection errors of pg, knex and SQLite are; query faults and foreign network errors are not', ({
    assert,
  }) => {
    const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code })
    for (const error of [
      withCode('ECONNREFUSED'),
      withCode('ECONNRESET'),
      withCode('57P01'),
      withCode('57P03'),
      withCode('08006'),
      withCode('53300'),
      new Error('select 1 - Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
      Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), {
        name: 'KnexTimeoutError',
      }),
      withCode('SQLITE_BUSY'),
      withCode('SQLITE_BUSY_SNAPSHOT'),
      withCode('SQLITE_LOCKED'),
      new AggregateError([withCode('ECONNREFUSED')], 'connect failed'),
    ]) {
      assert.isTrue(isDatabaseUnavailable(error), String((error as any).code ?? error.message))
    }
    for (const error of [
      withCode('23505'),
      withCode('42P01'),
      withCode('SQLITE_CONSTRAINT_UNIQUE'),
      new Error('System error'),
      new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') }),
      null,
      'ECONNREFUSED',
    ]) {
      assert.isFalse(isDatabaseUnavailable(error), String(error))
    }
  })
})
