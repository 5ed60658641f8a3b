import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import http from 'node:http'
import type { ChildProcess } from 'node:child_process'
import type { ServerResponse } from 'node:http'
import { test } from '@japa/runner'
import type { Assert } from '@japa/assert'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import paymentService from '#services/payment_service'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { CREATE_PATH, TRON_WALLET, orderParams, signed } from '#tests/helpers/merchant'
import { HttpStub } from '#tests/helpers/http_stub'
import { startServerProcess, type RunningServer } from '#tests/helpers/processes'
import { type Answer, sample, send, waitFor } from '#tests/helpers/ops'

/** Resolves with how the child ended (listen before signalling it). */
function exitOf(
  child: ChildProcess
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode })
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
}

/** Requests the server is answering now (its own gauge; the scrape itself counts one). */
async function inFlight(server: RunningServer): Promise<number> {
  const answer = await send(`${server.url}/metrics`)
  return sample(answer.body, 'gateway_http_requests_in_flight') ?? -1
}

/** A signed create; a failure (reset, hang-up) resolves as the Error, so that it is asserted on. */
function create(server: RunningServer, agent: http.Agent): Promise<Answer | Error> {
  const body = JSON.stringify(signed(orderParams({ amount: 100 })))
  return send(`${server.url}${CREATE_PATH}`, { method: 'POST', body, agent }).catch(
    (error: Error) => error
  )
}

function assertAnswered(assert: Assert, answers: (Answer | Error)[]) {
  for (const answer of answers) {
    if (answer instanceof Error) assert.fail(`a request was cut: ${answer.message}`)
    else assert.equal(answer.status, 200, answer.body)
  }
  return answers as Answer[]
}

/** Until a new connection is refused: the listener is closed. */
function listenerClosed(server: RunningServer) {
  return waitFor(
    () =>
      send(`${server.url}/health/live`).then(
        () => false,
        (error) => (error as NodeJS.ErrnoException).code === 'ECONNREFUSED'
      ),
    'the listener to close'
  )
}

/**
 * A live rate source that holds its answers until released: creates wait
 * on it (a real slow path of the create request, on both databases,
 * without blocking the server's event loop).
 */
async function slowRateSource() {
  const stub = await new HttpStub().start()
  const held: ServerResponse[] = []
  stub.handler = (_request, response) => {
    held.push(response)
  }
  const answer = (response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ cny: { usdt: 0.138 } }))
  }
  return {
    stub,
    held,
    release() {
      stub.json({ cny: { usdt: 0.138 } })
      for (const response of held.splice(0)) answer(response)
    },
  }
}

/** Which database this run is on (bin/test.ts: DB_CONNECTION, SQLite by default). */
const onPostgres = process.env.DB_CONNECTION === 'pg'

test.group('Graceful shutdown', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await walletAdmin.add('tron', TRON_WALLET)
    await settings.set('rate_limit.create_per_minute', '0')
  })

  test('SIGTERM with requests in flight answers every one (Connection: close), closes idle keep-alive connections and exits 0', async ({
    assert,
    cleanup,
  }) => {
    const source = await slowRateSource()
    cleanup(() => source.stub.stop())
    await settings.set('rate.api_url', `${source.stub.url}/v1`)
    await settings.set('rate.timeout_seconds', '60')
    // An idle keep-alive connection must not keep the process for its 120 s.
    // With the background jobs: they stop too (the job in hand finishes) before the exit.
    const server = await startServerProcess({
      HTTP_KEEP_ALIVE_TIMEOUT: '120',
      LOG_LEVEL: 'info',
      RUN_JOBS: 'true',
    })
    cleanup(() => server.stop())
    const exited = exitOf(server.process)

    const idleAgent = new http.Agent({ keepAlive: true })
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 })
    cleanup(() => {
      idleAgent.destroy()
      agent.destroy()
    })
    await send(`${server.url}/health/live`, { agent: idleAgent })
    const idleSocketClosed = new Promise<void>((resolve) => {
      const sockets = Object.values(idleAgent.freeSockets).flat()
      assert.lengthOf(sockets, 1)
      sockets[0]!.once('close', () => resolve())
    })

    const count = 12
    const creates = Array.from({ length: count }, () => create(server, agent))
    await waitFor(
      async () => source.held.length > 0 && (await inFlight(server)) >= count + 1,
      'every create to be in flight, waiting for the rate'
    )
    assert.lengthOf(source.held, 1) // one fetch of the rate, shared

    server.process.kill('SIGTERM')
    await listenerClosed(server)
    await idleSocketClosed
    const ready = await send(`${server.url}/health/ready`).catch((error) => error)
    assert.equal(ready.code, 'ECONNREFUSED')
    source.release()

    const answers = assertAnswered(assert, await Promise.all(creates))
    for (const answer of answers) {
      assert.equal(JSON.parse(answer.body).status_code, 200)
      assert.equal(answer.headers.connection, 'close')
    }
    assert.deepEqual(await exited, { code: 0, signal: null })
    assert.equal(await countRows('orders'), count)
    assert.include(server.stdout(), 'shutting down')
    assert.include(server.stdout(), 'background jobs stopped')
  }).timeout(60_000)

  test('a second signal exits at once, with 128 + the signal number', async ({
    assert,
    cleanup,
  }) => {
    const source = await slowRateSource()
    cleanup(() => source.stub.stop())
    await settings.set('rate.api_url', `${source.stub.url}/v1`)
    await settings.set('rate.timeout_seconds', '60')
    const server = await startServerProcess()
    cleanup(() => server.stop())
    const exited = exitOf(server.process)

    const agent = new http.Agent({ keepAlive: true })
    cleanup(() => agent.destroy())
    const pending = create(server, agent)
    await waitFor(
      async () => source.held.length > 0 && (await inFlight(server)) >= 2,
      'the create to wait for the rate'
    )

    server.process.kill('SIGTERM')
    await listenerClosed(server)
    // The first signal alone would wait for the create (its rate source answers
    // only after 60 s); the second ends the process now.
    server.process.kill('SIGTERM')
    assert.deepEqual(await exited, { code: 143, signal: null })
    assert.include(server.stderr(), 'SIGTERM received again')
    const outcome = await pending
    assert.instanceOf(outcome, Error) // cut: the process is gone
  }).timeout(60_000)

  test('PostgreSQL: requests waiting for a pool connection, and creates queued for a create statement, are answered too', async ({
    assert,
    cleanup,
  }) => {
    await rateAdmin.set('USDT', 'CNY', '7.25')
    const server = await startServerProcess()
    cleanup(() => server.stop())
    const exited = exitOf(server.process)
    const poolMax = Number(
      (db.getRawConnection(db.primaryConnectionName)?.config as any).pool?.max ?? 10
    )
    const agent = new http.Agent({ keepAlive: true, maxSockets: 100 })
    cleanup(() => agent.destroy())
    const first = assertAnswered(assert, [await create(server, agent)])[0]
    const statusPath = `${server.url}/pay/check-status/${JSON.parse(first.body).data.trade_id}`

    // Hold the orders table: every request reading or writing it waits in
    // PostgreSQL holding a pool connection, and those beyond the pool's size
    // wait for a connection. Creates go out two statements at a time, the
    // others queue for the next one (amount_allocator.ts, PG_CREATE_SLOTS).
    let unlock!: () => void
    const unlocked = new Promise<void>((resolve) => (unlock = resolve))
    let locked!: () => void
    const lockTaken = new Promise<void>((resolve) => (locked = resolve))
    const holder = db.transaction(async (trx) => {
      await trx.rawQuery('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE')
      locked()
      await unlocked
    })
    cleanup(async () => {
      unlock()
      await holder.catch(() => {})
    })
    await lockTaken

    const creates = Array.from({ length: 12 }, () => create(server, agent))
    const reads = Array.from({ length: poolMax + 10 }, () =>
      send(statusPath, { agent }).catch((error: Error) => error)
    )
    const waitingInDatabase = async () => {
      const result = await db.rawQuery(
        `SELECT COUNT(*) AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
         WHERE NOT l.granted AND d.datname = current_database()`
      )
      return Number(result.rows[0].n)
    }
    await waitFor(
      async () => (await inFlight(server)) >= creates.length + reads.length + 1,
      'every request to be in flight'
    )
    await waitFor(async () => (await waitingInDatabase()) >= poolMax, 'the pool to be saturated')

    server.process.kill('SIGTERM')
    await listenerClosed(server)
    unlock()
    await holder

    assertAnswered(assert, await Promise.all(creates))
    assertAnswered(assert, await Promise.all(reads))
    assert.deepEqual(await exited, { code: 0, signal: null })
    assert.equal(await countRows('orders'), 1 + creates.length)
  })
    .timeout(60_000)
    .skip(!onPostgres, 'PostgreSQL only (the SQLite run has its own case)')

  test('SIGTERM while a callback is being delivered: the delivery finishes and is recorded, its lease released, then exit 0', async ({
    client,
    assert,
    cleanup,
  }) => {
    await prepareLifecycle()
    const merchant = await new HttpStub().start()
    cleanup(() => merchant.stop())
    const held: ServerResponse[] = []
    merchant.handler = (_request, response) => {
      held.push(response)
    }
    const order = await newOrder(client, { notify_url: `${merchant.url}/notify` })
    await paymentService.markPaid(order.id, { reference: 'tx-shutdown-1', source: 'admin' })

    const server = await startServerProcess({ RUN_JOBS: 'true' })
    cleanup(() => server.stop())
    const exited = exitOf(server.process)
    await waitFor(() => held.length === 1, 'the callback to reach the merchant')

    server.process.kill('SIGTERM')
    await listenerClosed(server)
    held[0]!.writeHead(200, { 'content-type': 'text/plain' })
    held[0]!.end('ok')

    assert.deepEqual(await exited, { code: 0, signal: null })
    const callback = await db.from('callbacks').where('order_id', order.id).first()
    assert.equal(callback.status, 'delivered')
    assert.isNull(callback.locked_by)
    assert.equal(await countRows('callback_attempts'), 1)
    assert.lengthOf(merchant.requests, 1)
  }).timeout(60_000)
})
