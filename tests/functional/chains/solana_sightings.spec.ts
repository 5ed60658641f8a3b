import { test } from '@japa/runner'
import Order from '#models/order'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { SolanaRpcServer } from '#tests/helpers/solana/solana_rpc_server'
import {
  SOLANA,
  lamportsOf,
  prepareSolana,
  solanaOrder,
  usdtUnits,
} from '#tests/helpers/solana/solana_setup'
import { scanOnce } from '#tests/helpers/scanning'

const scanSolana = () => scanOnce(SOLANA)

async function progressOf(client: any, tradeId: string) {
  const response = await client.get(`/pay/payment-progress/${tradeId}`)
  response.assertStatus(200)
  return response.body().data
}

test.group('Solana: payment seen, confirming (litesvm)', (group) => {
  const server = new SolanaRpcServer()
  group.setup(async () => {
    await server.start()
    return () => server.stop()
  })
  group.each.setup(() => resetDatabase())

  const transactionFetches = (commitment: string) =>
    server.calls.filter(
      (call) =>
        call.method === 'getTransaction' &&
        ((call.params[1] as any)?.commitment ?? 'finalized') === commitment
    ).length

  test('confirmations 32: a confirmed transfer is sighted with its depth, paid once finalized', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server, { confirmations: 32 })
    const order = await solanaOrder(client, 'usdt')
    await scanSolana()
    fixture.chain.holdFinality()
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits(order.actualAmount)
    )

    const report = await scanSolana()
    assert.equal(report.transfers, 0)
    assert.equal(report.unconfirmed, 1)
    const seen = await progressOf(client, order.tradeId)
    assert.equal(seen.status, 1)
    assert.containsSubset(seen.sighting, {
      reference: payment.signature,
      confirmations: 1,
      required_confirmations: 32,
      explorer_url: `https://explorer.solana.com/tx/${payment.signature}`,
    })
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('payment_references'), 0)

    // Three more blocks on top: deeper; the transaction is not fetched again.
    const stranger = await fixture.chain.newWallet()
    for (let index = 0; index < 3; index++)
      await fixture.chain.paySol(fixture.customer, stranger.address, 1_000_000n)
    server.calls = []
    await scanSolana()
    assert.equal((await progressOf(client, order.tradeId)).sighting.confirmations, 3)
    assert.equal(transactionFetches('confirmed'), 0)
    assert.equal(server.count('getSignatureStatuses'), 1)

    fixture.chain.finalize()
    assert.equal((await scanSolana()).paid, 1)
    const paid = await progressOf(client, order.tradeId)
    assert.equal(paid.status, 2)
    assert.isNull(paid.sighting)
    assert.deepEqual(paid.payment, {
      reference: payment.signature,
      explorer_url: `https://explorer.solana.com/tx/${payment.signature}`,
    })
    assert.equal(await countRows('payment_sightings'), 0)
  })

  test('a confirmed transfer dropped before finality loses its sighting; another amount has none', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server, { confirmations: 32 })
    const order = await solanaOrder(client, 'sol')
    await scanSolana()
    fixture.chain.holdFinality()
    const payment = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf(order.actualAmount)
    )
    await fixture.chain.paySol(fixture.customer, fixture.wallet.address, lamportsOf('0.09'))
    const report = await scanSolana()
    assert.equal(report.unconfirmed, 2)
    assert.equal((await progressOf(client, order.tradeId)).sighting.reference, payment.signature)
    assert.equal(await countRows('payment_sightings'), 1)

    fixture.chain.drop(payment.signature)
    await scanSolana()
    assert.isNull((await progressOf(client, order.tradeId)).sighting)
    assert.equal(await countRows('payment_sightings'), 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('confirmations below 32: confirmed pays at once, nothing waits, no extra query', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server, { confirmations: 1 })
    const order = await solanaOrder(client, 'usdt')
    await scanSolana()
    fixture.chain.holdFinality()
    await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits(order.actualAmount)
    )
    server.calls = []
    const report = await scanSolana()
    assert.equal(report.paid, 1)
    assert.equal(report.unconfirmed, 0)
    assert.equal(server.count('getSignaturesForAddress'), 3) // the scan's own, one per watched account
    assert.equal(server.count('getSignatureStatuses'), 0)
    assert.isNull((await progressOf(client, order.tradeId)).sighting)
  })
})
