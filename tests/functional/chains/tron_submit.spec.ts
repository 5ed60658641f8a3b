import { test } from '@japa/runner'
import { randomBytes } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { runAce } from '#tests/helpers/processes'
import { FakeTronGrid } from '#tests/helpers/tron/fake_trongrid'
import {
  USDC_CONTRACT,
  USDT_CONTRACT,
  baseUnits,
  newTronOrder,
  prepareTronNetwork,
  type TronTestNetwork,
} from '#tests/helpers/tron/tron_network'

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

test.group('TRON: submit-tx-hash', (group) => {
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

  test('a solidified USDT transfer pays the order; 0x and upper case are accepted', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    const response = await submit(client, order.tradeId, `0x${paid.txid.toUpperCase()}`)
    response.assertStatus(200)
    assert.deepEqual(response.body().data, {
      trade_id: order.tradeId,
      block_transaction_id: paid.txid,
      status: 2,
    })
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
    assert.equal(await countRows('callbacks'), 1)
  })

  test('a solidified TRX transfer pays the order', async ({ client, assert }) => {
    const order = await newTronOrder(client, { token: 'trx' })
    const paid = fake.payTrx({
      from: network.payer,
      to: network.wallet,
      sun: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    const response = await submit(client, order.tradeId, paid.txid)
    assert.equal(response.body().status_code, 200, JSON.stringify(response.body()))
    assert.equal((await Order.findOrFail(order.id)).status, 2)
  })

  test('orders:mark-paid verifies the reference on chain too', async ({ client, assert }) => {
    const order = await newTronOrder(client)
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    const result = await runAce(['orders:mark-paid', order.tradeId, paid.txid])
    assert.equal(result.code, 0, result.stdout + result.stderr)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
  })

  type Arrange = (context: { order: Order; network: TronTestNetwork; fake: FakeTronGrid }) => string
  const refusals: [string, Arrange, RegExp][] = [
    ['not found', () => randomBytes(32).toString('hex'), /not found on TRON/],
    ['a malformed reference', () => `${'a'.repeat(63)}z`, /not a TRON transaction id/],
    [
      'a failed (reverted) transfer',
      ({ order, network: tron, fake: tronGrid }) => {
        const entry = tronGrid.payTrc20({
          from: tron.payer,
          to: tron.wallet,
          contract: USDT_CONTRACT,
          amount: baseUnits(order.actualAmount),
          fail: true,
        })
        tronGrid.mine(19)
        return entry.txid
      },
      /failed on chain/,
    ],
    [
      'to another address',
      ({ order, network: tron, fake: tronGrid }) => {
        const entry = tronGrid.payTrc20({
          from: tron.payer,
          to: tron.payer.address,
          contract: USDT_CONTRACT,
          amount: baseUnits(order.actualAmount),
        })
        tronGrid.mine(19)
        return entry.txid
      },
      /it pays T[1-9A-HJ-NP-Za-km-z]{33}, not T/,
    ],
    [
      'of another token',
      ({ order, network: tron, fake: tronGrid }) => {
        const entry = tronGrid.payTrc20({
          from: tron.payer,
          to: tron.wallet,
          contract: USDC_CONTRACT,
          amount: baseUnits(order.actualAmount),
        })
        tronGrid.mine(19)
        return entry.txid
      },
      /does not transfer USDT/,
    ],
    [
      'of TRX for a USDT order',
      ({ order, network: tron, fake: tronGrid }) => {
        const entry = tronGrid.payTrx({
          from: tron.payer,
          to: tron.wallet,
          sun: baseUnits(order.actualAmount),
        })
        tronGrid.mine(19)
        return entry.txid
      },
      /does not transfer USDT/,
    ],
    [
      'of a wrong amount',
      ({ order, network: tron, fake: tronGrid }) => {
        const entry = tronGrid.payTrc20({
          from: tron.payer,
          to: tron.wallet,
          contract: USDT_CONTRACT,
          amount: baseUnits(order.actualAmount) - 10_000n,
        })
        tronGrid.mine(19)
        return entry.txid
      },
      /transfers 13.79 USDT, the order expects 13.8/,
    ],
    [
      'in a block not solidified yet',
      ({ order, network: tron, fake: tronGrid }) => {
        const entry = tronGrid.payTrc20({
          from: tron.payer,
          to: tron.wallet,
          contract: USDT_CONTRACT,
          amount: baseUnits(order.actualAmount),
        })
        tronGrid.mine(18)
        return entry.txid
      },
      /not yet confirmed \(0 of 19 confirmations\)/,
    ],
  ]
  for (const [name, arrange, message] of refusals) {
    test(`refuses a transaction ${name}`, async ({ client, assert }) => {
      const order = await newTronOrder(client)
      const reference = arrange({ order, network, fake })
      const response = await submit(client, order.tradeId, reference)
      response.assertStatus(400)
      assert.match(response.body().message, message)
      assert.equal((await Order.findOrFail(order.id)).status, 1)
    })
  }

  test('refuses a solidified transfer shallower than the chain asks, then accepts it deeper', async ({
    client,
    assert,
  }) => {
    await db.from('chains').where('network', 'tron').update({ confirmations: 25 })
    const order = await newTronOrder(client)
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    const early = await submit(client, order.tradeId, paid.txid)
    assert.match(early.body().message, /not yet confirmed \(20 of 25 confirmations\)/)
    fake.mine(5)
    const late = await submit(client, order.tradeId, paid.txid)
    assert.equal(late.body().status_code, 200, JSON.stringify(late.body()))
  })

  test('an unknown id is looked up in both the solidified and the recent view', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    const response = await submit(client, order.tradeId, randomBytes(32).toString('hex'))
    assert.match(response.body().message, /not found on TRON/)
    assert.lengthOf(fake.requestsTo('/walletsolidity/gettransactioninfobyid'), 1)
    assert.lengthOf(fake.requestsTo('/wallet/gettransactioninfobyid'), 1)
  })
})
