import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import Order from '#models/order'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { Anvil } from '#tests/helpers/evm/anvil'
import { type RpcProxy } from '#tests/helpers/evm/rpc_proxy'
import {
  configureEthereum,
  createEthOrder,
  randomAddress,
  scanEthereum,
  startNodeBehindProxy,
  type EvmFixture,
} from '#tests/helpers/evm/evm_setup'

async function progressOf(client: any, tradeId: string) {
  const response = await client.get(`/pay/payment-progress/${tradeId}`)
  response.assertStatus(200)
  return response.body()
}

test.group('EVM chain: payment seen, confirming (anvil)', (group) => {
  const anvil = new Anvil()
  let proxy: RpcProxy
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  let fixture: EvmFixture

  group.setup(async () => {
    const node = await startNodeBehindProxy(anvil)
    ;({ tokens, proxy } = node)
    return node.stop
  })
  group.each.setup(async () => {
    await resetDatabase()
    fixture = await configureEthereum(tokens, [proxy.url], 3)
    proxy.reset()
  })

  test('a token transfer 1 of 3 deep is a sighting, never a payment; once deep enough it pays and shows the explorer link', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client)
    await scanEthereum()
    const before = await progressOf(client, order.tradeId)
    assert.deepEqual(before.data, {
      trade_id: order.tradeId,
      status: 1,
      sighting: null,
      payment: null,
    })

    const hash = (
      await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    ).toLowerCase()
    const scannedAt = Date.now()
    const report = await scanEthereum()
    assert.equal(report.transfers, 0)
    assert.equal(report.unconfirmed, 1)

    const seen = await progressOf(client, order.tradeId)
    assert.equal(seen.status_code, 200)
    assert.isString(seen.request_id)
    assert.equal(seen.data.status, 1)
    assert.isNull(seen.data.payment)
    const { seen_at: seenAt, ...sighting } = seen.data.sighting
    assert.deepEqual(sighting, {
      reference: hash,
      confirmations: 1,
      required_confirmations: 3,
      explorer_url: `https://etherscan.io/tx/${hash}`,
    })
    assert.isAtLeast(seenAt, scannedAt)
    assert.isAtMost(seenAt, Date.now())
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('payment_references'), 0)
    assert.equal(await countRows('callbacks'), 0)
    assert.equal((await client.get(`/pay/check-status/${order.tradeId}`)).body().data.status, 1)

    await anvil.mine(1) // 2 of 3: still a sighting, deeper, first seen unchanged
    await scanEthereum()
    const deeper = (await progressOf(client, order.tradeId)).data.sighting
    assert.equal(deeper.confirmations, 2)
    assert.equal(deeper.seen_at, seenAt)
    assert.equal((await Order.findOrFail(order.id)).status, 1)

    await anvil.mine(1) // 3 of 3: paid
    const paidReport = await scanEthereum()
    assert.equal(paidReport.paid, 1)
    const paid = await progressOf(client, order.tradeId)
    assert.deepEqual(paid.data, {
      trade_id: order.tradeId,
      status: 2,
      sighting: null,
      payment: { reference: hash, explorer_url: `https://etherscan.io/tx/${hash}` },
    })
    assert.equal(await countRows('payment_sightings'), 0)
  }).timeout(60_000)

  test('a transfer reorganised out loses its sighting', async ({ client, assert }) => {
    const order = await createEthOrder(client)
    await scanEthereum()
    const snapshot = await anvil.snapshot()
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await scanEthereum()
    assert.isNotNull((await progressOf(client, order.tradeId)).data.sighting)

    await anvil.revert(snapshot) // the block with the payment is gone
    await anvil.mine(2)
    const report = await scanEthereum()
    assert.equal(report.unconfirmed, 0)
    assert.isNull((await progressOf(client, order.tradeId)).data.sighting)
    assert.equal(await countRows('payment_sightings'), 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('a native ETH transfer is sighted, follows its depth, and goes away when reorganised out', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client, { token: 'eth' })
    await scanEthereum()
    const snapshot = await anvil.snapshot()
    const hash = (await anvil.payNative(fixture.wallet, order.actualAmount)).toLowerCase()
    await scanEthereum()
    const first = (await progressOf(client, order.tradeId)).data.sighting
    assert.equal(first.reference, hash)
    assert.equal(first.confirmations, 1)

    await anvil.mine(1)
    await scanEthereum()
    assert.equal((await progressOf(client, order.tradeId)).data.sighting.confirmations, 2)

    // Same height again after the revert: the kept window must notice the new blocks.
    await anvil.revert(snapshot)
    await anvil.mine(2)
    await scanEthereum()
    assert.isNull((await progressOf(client, order.tradeId)).data.sighting)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('no sighting for a transfer of another amount, another token or to another address', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('ethereum', { confirmations: 10 }) // each payment mines a block: keep all three shallow
    const order = await createEthOrder(client)
    await scanEthereum()
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, '13.79')
    await anvil.payToken(fixture.usdc, 6, fixture.wallet, order.actualAmount)
    await anvil.payToken(fixture.usdt, 6, randomAddress(), order.actualAmount)
    const report = await scanEthereum()
    assert.equal(report.unconfirmed, 2) // seen on our wallet, but they claim no order
    assert.isNull((await progressOf(client, order.tradeId)).data.sighting)
    assert.equal(await countRows('payment_sightings'), 0)
  })

  test('a sighting never pays: with confirmations raised it waits, lowered it pays at the next scan', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('ethereum', { confirmations: 10 })
    const order = await createEthOrder(client)
    await scanEthereum()
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(4)
    await scanEthereum()
    const seen = (await progressOf(client, order.tradeId)).data
    assert.equal(seen.status, 1)
    assert.equal(seen.sighting.confirmations, 5)
    assert.equal(seen.sighting.required_confirmations, 10)

    await chainAdmin.set('ethereum', { confirmations: 5 })
    assert.equal((await scanEthereum()).paid, 1)
    assert.equal((await progressOf(client, order.tradeId)).data.status, 2)
  })

  test('extra RPC cost: the native window is read once, then only the new head', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('ethereum', { confirmations: 12 })
    await createEthOrder(client, { token: 'eth' })
    await anvil.mine(20)
    await scanEthereum() // the window of 11 unconfirmed blocks is read once here
    await anvil.mine(1)
    proxy.reset()
    const report = await scanEthereum()
    assert.isTrue(report.caughtUp)
    // Confirmed part: the cursor's block and the newly confirmed one. Window:
    // the new head only (the 10 blocks below it are kept from the last run).
    assert.isAtMost(proxy.calls.get('eth_getBlockByNumber') ?? 0, 3)
    assert.isAtMost(proxy.calls.get('eth_getLogs') ?? 0, 2)
    assert.equal(proxy.calls.get('eth_getTransactionReceipt') ?? 0, 0)
  })

  test('unknown or malformed trade_id: 10008', async ({ client, assert }) => {
    for (const tradeId of ['NoSuchTradeId12345678', 'bad id!']) {
      const response = await client.get(`/pay/payment-progress/${encodeURIComponent(tradeId)}`)
      response.assertStatus(400)
      assert.equal(response.body().status_code, 10008)
      assert.isNull(response.body().data)
    }
  })
})
