import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import Order from '#models/order'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { FakeTronGrid } from '#tests/helpers/tron/fake_trongrid'
import {
  USDT_CONTRACT,
  baseUnits,
  newTronOrder,
  prepareTronNetwork,
  type TronTestNetwork,
} from '#tests/helpers/tron/tron_network'
import { scanOnce } from '#tests/helpers/scanning'

const scanTron = () => scanOnce('tron')

async function progressOf(client: any, tradeId: string) {
  const response = await client.get(`/pay/payment-progress/${tradeId}`)
  response.assertStatus(200)
  return response.body().data
}

test.group('TRON: payment seen, confirming (fake TronGrid)', (group) => {
  const fake = new FakeTronGrid()
  let network: TronTestNetwork

  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    network = await prepareTronNetwork(fake)
  })

  test('USDT: an unsolidified transfer is sighted with its depth, then paid once solidified', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    await scanTron()
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(2) // depth 3 of 19, far from solidified
    fake.requests = []
    const report = await scanTron()
    assert.equal(report.transfers, 0)
    assert.equal(report.unconfirmed, 1)

    const seen = await progressOf(client, order.tradeId)
    assert.equal(seen.status, 1)
    assert.containsSubset(seen.sighting, {
      reference: paid.txid,
      confirmations: 3,
      required_confirmations: 19,
      explorer_url: `https://tronscan.org/#/transaction/${paid.txid}`,
    })
    // Extra cost: no listing more than the confirmed scan makes; one full-node receipt, no solidified one.
    assert.lengthOf(fake.requestsTo('trc20'), 2) // USDT and USDC
    assert.lengthOf(fake.requestsTo('transactions'), 1) // TRX
    assert.lengthOf(fake.requestsTo('/wallet/gettransactioninfobyid'), 1)
    assert.lengthOf(fake.requestsTo('/walletsolidity/gettransactioninfobyid'), 0)

    fake.mine(16) // depth 19 but not solidified yet (19 blocks must be built on it)
    await scanTron()
    const waiting = await progressOf(client, order.tradeId)
    assert.equal(waiting.status, 1)
    assert.equal(
      waiting.sighting.confirmations,
      18,
      'never shown as deep as required while not paid'
    )

    fake.mine(1) // solidified
    assert.equal((await scanTron()).paid, 1)
    const done = await progressOf(client, order.tradeId)
    assert.equal(done.status, 2)
    assert.isNull(done.sighting)
    assert.deepEqual(done.payment, {
      reference: paid.txid,
      explorer_url: `https://tronscan.org/#/transaction/${paid.txid}`,
    })
    assert.equal(await countRows('payment_sightings'), 0)
  })

  test('TRX: an unsolidified transfer never pays, even with 1 confirmation asked, but is sighted', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('tron', { confirmations: 1 })
    const order = await newTronOrder(client, { token: 'trx' })
    await scanTron()
    const paid = fake.payTrx({
      from: network.payer,
      to: network.wallet,
      sun: baseUnits(order.actualAmount),
    })
    fake.mine(3)
    fake.requests = []
    const report = await scanTron()
    assert.equal(report.paid, 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    const seen = (await progressOf(client, order.tradeId)).sighting
    assert.equal(seen.reference, paid.txid)
    assert.equal(seen.confirmations, 0) // shown below the requirement of 1
    // TRX rows carry their block: no receipt lookup at all
    assert.lengthOf(fake.requestsTo('/wallet/gettransactioninfobyid'), 0)

    fake.mine(16)
    assert.equal((await scanTron()).paid, 1)
    assert.isNull((await progressOf(client, order.tradeId)).sighting)
  })

  test('a transfer dropped before solidification loses its sighting; another amount has none', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    await scanTron()
    const dropped = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount) - 10_000n,
    })
    await scanTron()
    assert.equal((await progressOf(client, order.tradeId)).sighting.reference, dropped.txid)
    assert.equal(await countRows('payment_sightings'), 1)

    fake.drop(dropped.txid)
    await scanTron()
    assert.isNull((await progressOf(client, order.tradeId)).sighting)
    assert.equal(await countRows('payment_sightings'), 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })
})
