import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings, { SETTINGS_REFRESH_MS } from '#settings/settings_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import {
  CREATE_PATH,
  TRON_WALLET,
  TRON_WALLET_2,
  createOrder,
  orderParams,
  signed,
} from '#tests/helpers/merchant'
import { startServerProcess, type RunningServer } from '#tests/helpers/processes'

function pairsOf(rows: { receive_address: string; actual_amount: number }[]) {
  return new Set(rows.map((row) => `${row.receive_address}|${row.actual_amount}`))
}

async function allowBursts() {
  await settings.set('rate_limit.create_per_minute', '0')
}

test.group('Unique amounts under concurrency', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await allowBursts()
  })

  test('100 concurrent creates of one amount on one wallet get 100 distinct amounts', async ({
    client,
    assert,
  }) => {
    await makeTronPayable()
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => createOrder(client, orderParams({ amount: 72.5 })))
    )
    for (const response of responses)
      assert.equal(response.status(), 200, JSON.stringify(response.body()))
    const data = responses.map((response) => response.body().data)
    assert.equal(pairsOf(data).size, 100)
    const amounts = data.map((row) => row.actual_amount).sort((a, b) => a - b)
    assert.equal(amounts[0], 10)
    assert.equal(amounts[99], 10.99)
    assert.equal(await countRows('amount_locks'), 100)
  }).timeout(120_000)

  test('100 concurrent creates spread over three wallets before stepping up', async ({
    client,
    assert,
  }) => {
    await makeTronPayable([TRON_WALLET, TRON_WALLET_2, 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8'])
    const responses = await Promise.all(
      Array.from({ length: 100 }, () => createOrder(client, orderParams({ amount: 72.5 })))
    )
    const data = responses.map((response) => response.body().data)
    assert.isTrue(responses.every((response) => response.status() === 200))
    assert.equal(pairsOf(data).size, 100)
    // 100 orders on 3 wallets need 34 amounts: 10.00 … 10.33
    const highest = Math.max(...data.map((row) => row.actual_amount))
    assert.equal(highest, 10.33)
  }).timeout(120_000)

  test('25 concurrent creates over 20 amount steps: 20 orders, 5 refusals with 10005, nothing half-written', async ({
    client,
    assert,
  }) => {
    await makeTronPayable()
    await settings.set('order.amount_max_steps', '20')
    const responses = await Promise.all(
      Array.from({ length: 25 }, () => createOrder(client, orderParams({ amount: 72.5 })))
    )
    const codes = responses.map((response) => response.body().status_code)
    assert.equal(codes.filter((code) => code === 200).length, 20)
    assert.equal(codes.filter((code) => code === 10005).length, 5)
    assert.equal(await countRows('orders'), 20)
    assert.equal(await countRows('amount_locks'), 20)
  }).timeout(120_000)
})

test.group('Unique amounts across processes', (group) => {
  let second: RunningServer

  group.setup(async () => {
    second = await startServerProcess()
    return () => second.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    await allowBursts()
  })

  test('two server processes creating 100 orders of one amount never share a pair', async ({
    client,
    assert,
  }) => {
    await makeTronPayable([TRON_WALLET, TRON_WALLET_2])
    // The other process sees settings changed here within SETTINGS_REFRESH_MS.
    await new Promise((resolve) => setTimeout(resolve, SETTINGS_REFRESH_MS + 200))
    const viaSecond = (params: Record<string, unknown>) =>
      fetch(`${second.url}${CREATE_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'accept': 'application/json' },
        body: JSON.stringify(signed(params)),
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as any,
      }))

    const results = await Promise.all(
      Array.from({ length: 100 }, (_, index) =>
        index % 2 === 0
          ? createOrder(client, orderParams({ amount: 72.5 })).then((response) => ({
              status: response.status(),
              body: response.body(),
            }))
          : viaSecond(orderParams({ amount: 72.5 }))
      )
    )
    for (const result of results) assert.equal(result.status, 200, JSON.stringify(result.body))
    assert.equal(pairsOf(results.map((result) => result.body.data)).size, 100)
    const [row] = await db
      .from('amount_locks')
      .countDistinct({ total: db.raw("address || '|' || CAST(amount AS TEXT)") as any })
    assert.equal(Number(row.total), 100)
  }).timeout(180_000)
})
