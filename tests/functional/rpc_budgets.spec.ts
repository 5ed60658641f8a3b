import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import settings from '#settings/settings_service'
import { rpcFor } from '#chains/chain_rpc'
import { RpcPool } from '#chains/rpc_pool'
import { resetDatabase } from '#tests/helpers/database'
import { FAKE_NETWORK, fakeFamily, installFakeChain } from '#tests/helpers/fake_chain'

const ENDPOINT = 'https://rpc.example/one'

async function fakeChain() {
  return Chain.findByOrFail('network', FAKE_NETWORK)
}

test.group('RPC budgets: where an endpoint budget comes from', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await installFakeChain()
    await db
      .from('chains')
      .where('network', FAKE_NETWORK)
      .update({ rpc_urls: JSON.stringify([ENDPOINT]) })
    RpcPool.reset()
  })

  test('no override and no family budget: the core settings (per-day 0 is no cap)', async ({
    assert,
  }) => {
    assert.deepEqual((await rpcFor(await fakeChain())).budget(ENDPOINT), {
      perSecond: 10,
      perDay: null,
    })
    await settings.set('chains.rpc_requests_per_second', '3')
    await settings.set('chains.rpc_requests_per_day', '5000')
    assert.deepEqual((await rpcFor(await fakeChain())).budget(ENDPOINT), {
      perSecond: 3,
      perDay: 5000,
    })
  })

  test('the family budget of the provider (given the URL and key) beats the settings', async ({
    assert,
  }) => {
    const asked: [string, string][] = []
    fakeFamily.rpcBudget = (url, apiKey) => {
      asked.push([url, apiKey])
      return apiKey ? { perSecond: 15, perDay: 100_000 } : { perSecond: 1, perDay: null }
    }
    await settings.set('chains.rpc_requests_per_day', '5000')
    assert.deepEqual((await rpcFor(await fakeChain())).budget(ENDPOINT), {
      perSecond: 1,
      perDay: null,
    })
    const chain = await fakeChain()
    chain.apiKey = 'key-123'
    await chain.save()
    assert.deepEqual((await rpcFor(await fakeChain())).budget(ENDPOINT), {
      perSecond: 15,
      perDay: 100_000,
    })
    assert.deepEqual(asked.at(-1), [ENDPOINT, 'key-123'])
  })

  test("the operator's override beats the family, field by field; per-day 0 is no daily cap", async ({
    assert,
  }) => {
    fakeFamily.rpcBudget = () => ({ perSecond: 1, perDay: 100_000 })
    await db.from('chains').where('network', FAKE_NETWORK).update({ rpc_requests_per_second: 2.5 })
    assert.deepEqual((await rpcFor(await fakeChain())).budget(ENDPOINT), {
      perSecond: 2.5,
      perDay: 100_000,
    })
    await db.from('chains').where('network', FAKE_NETWORK).update({ rpc_requests_per_day: 0 })
    assert.deepEqual((await rpcFor(await fakeChain())).budget(ENDPOINT), {
      perSecond: 2.5,
      perDay: null,
    })
    await db.from('chains').where('network', FAKE_NETWORK).update({ rpc_requests_per_day: 250_000 })
    assert.deepEqual((await rpcFor(await fakeChain())).budget(ENDPOINT), {
      perSecond: 2.5,
      perDay: 250_000,
    })
  })

  test("the operator's own node (loopback, private address) is unlimited unless the family or operator says", async ({
    assert,
  }) => {
    const own = [
      'http://127.0.0.1:8545',
      'http://localhost:8545',
      'http://10.1.2.3:8545',
      'http://[::1]:8545',
    ]
    await db
      .from('chains')
      .where('network', FAKE_NETWORK)
      .update({ rpc_urls: JSON.stringify([...own, ENDPOINT]) })
    let rpc = await rpcFor(await fakeChain())
    for (const url of own) assert.isNull(rpc.budget(url), url)
    assert.deepEqual(rpc.budget(ENDPOINT), { perSecond: 10, perDay: null })
    fakeFamily.rpcBudget = () => ({ perSecond: 1, perDay: null })
    rpc = await rpcFor(await fakeChain())
    assert.deepEqual(rpc.budget(own[0]), { perSecond: 1, perDay: null })
    fakeFamily.rpcBudget = undefined
    await db.from('chains').where('network', FAKE_NETWORK).update({ rpc_requests_per_day: 500 })
    rpc = await rpcFor(await fakeChain())
    assert.deepEqual(rpc.budget(own[0]), { perSecond: 10, perDay: 500 })
  })

  test('the pool of a chain enforces its budget', async ({ assert }) => {
    await db.from('chains').where('network', FAKE_NETWORK).update({ rpc_requests_per_day: 2 })
    const rpc = await rpcFor(await fakeChain())
    await rpc.permit(ENDPOINT)
    await rpc.permit(ENDPOINT)
    await assert.rejects(() => rpc.permit(ENDPOINT), /daily request budget .* is spent/)
  })
})
