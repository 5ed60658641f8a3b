import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order, { OrderStatus } from '#models/order'
import chainScanner from '#services/chain_scanner'
import { registry } from '#support/runtime/metrics'
import { resetDatabase } from '#tests/helpers/database'
import { Anvil } from '#tests/helpers/evm/anvil'
import { LoadBalancer } from '#tests/helpers/evm/rpc_proxy'
import {
  configureEthereum,
  createEthOrder,
  deployTokens,
  type EvmFixture,
} from '#tests/helpers/evm/evm_setup'

/**
 * Reorganisations on a real node (anvil: evm_snapshot / evm_revert, then a
 * longer replacement chain), deeper than the 128 blocks the scanner once
 * rewound blindly, with payments on both sides; and a load balancer with
 * one node on another fork.
 */

async function reorgCount(): Promise<number> {
  const metric = await registry.getSingleMetric('gateway_reorged_payments_total')!.get()
  return metric.values
    .filter((value) => value.labels.network === 'ethereum')
    .reduce((sum, value) => sum + value.value, 0)
}

async function scan() {
  const [report] = await chainScanner.scan({ network: 'ethereum' })
  if (report.detail.startsWith('scan failed')) throw new Error(report.detail)
  return report
}

async function blockOf(anvil: Anvil, hash: `0x${string}`) {
  return (await anvil.client.getTransactionReceipt({ hash })).blockNumber
}

test.group('EVM chain: reorganisations deeper than 128 blocks', (group) => {
  const anvil = new Anvil()
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  let fixture: EvmFixture

  group.setup(async () => {
    await anvil.start()
    tokens = await deployTokens(anvil)
    return () => anvil.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    fixture = await configureEthereum(tokens, [anvil.url], 3)
    await scan()
  })

  test('a 150-block reorganisation: walked back to the common ancestor; the payment of the replaced chain is flagged, never changed; the new chain is paid', async ({
    client,
    assert,
  }) => {
    const before = await createEthOrder(client)
    const replaced = await createEthOrder(client)
    const after = await createEthOrder(client)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, before.actualAmount)
    await anvil.mine(2)
    const snapshot = await anvil.snapshot()
    const fork = await anvil.client.getBlockNumber()
    const oldHash = await anvil.payToken(fixture.usdt, 6, fixture.wallet, replaced.actualAmount)
    const oldBlock = await blockOf(anvil, oldHash)
    await anvil.mine(150)
    await scan()
    for (const order of [before, replaced])
      assert.equal((await Order.findOrFail(order.id)).status, OrderStatus.PAID)
    const flaggedBefore = await reorgCount()

    // The other chain: from the snapshot, without that payment, with another one, and longer.
    await anvil.revert(snapshot)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, after.actualAmount)
    await anvil.mine(200)
    const report = await scan()
    assert.deepEqual(report.reorg, {
      ancestor: String(fork),
      replacedUpTo: report.reorg!.replacedUpTo,
      flagged: 1,
    })
    assert.isAtLeast(
      Number(report.reorg!.replacedUpTo) - Number(fork),
      129,
      'deeper than the old fixed rewind'
    )

    // Paid on the new chain; the replaced chain's payment is still paid (the merchant was told), and flagged.
    assert.equal((await Order.findOrFail(after.id)).status, OrderStatus.PAID)
    assert.equal((await Order.findOrFail(replaced.id)).status, OrderStatus.PAID)
    assert.equal((await Order.findOrFail(before.id)).status, OrderStatus.PAID)
    const flags = await db.from('unmatched_payments').where('kind', 'reorged')
    assert.lengthOf(flags, 1, 'only the payment above the common ancestor')
    assert.equal(Number(flags[0].order_id), replaced.id)
    assert.equal(flags[0].reference, oldHash.toLowerCase())
    assert.match(
      flags[0].reason,
      new RegExp(`credited from block ${oldBlock} .*not found again in the new chain yet`)
    )
    const reference = await db.from('payment_references').where('order_id', replaced.id).first()
    assert.isNotNull(reference.reorged_at)
    assert.equal(String(reference.block_number), String(oldBlock))
    const audit = await db
      .from('audit_log')
      .where('action', 'order.reorged')
      .where('subject_id', replaced.tradeId)
    assert.lengthOf(audit, 1)
    assert.equal(audit[0].actor_kind, 'system')
    assert.equal(await reorgCount(), flaggedBefore + 1)
    // The operator is told: reorg.credited_order, not a plain payment.unmatched.
    const told = await db
      .from('notification_events')
      .whereIn('name', ['reorg.credited_order', 'payment.unmatched'])
    assert.deepEqual(
      told.map((event) => [event.name, JSON.parse(event.data).trade_id]),
      [['reorg.credited_order', replaced.tradeId]]
    )

    // Scanned again: nothing more is flagged or paid.
    await anvil.mine(2)
    const again = await scan()
    assert.isUndefined(again.reorg)
    assert.lengthOf(await db.from('unmatched_payments').where('kind', 'reorged'), 1)
  }).timeout(120_000)

  test('a payment included again by the new chain keeps its order paid; the flag names the old and the new block', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client)
    const raw = await anvil.signTokenPayment(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    const snapshot = await anvil.snapshot()
    const hash = await anvil.sendRaw(raw)
    const oldBlock = await blockOf(anvil, hash)
    await anvil.mine(140)
    await scan()
    assert.equal((await Order.findOrFail(order.id)).status, OrderStatus.PAID)

    await anvil.revert(snapshot)
    await anvil.mine(3)
    assert.equal(await anvil.sendRaw(raw), hash, 'the very same transaction')
    const newBlock = await blockOf(anvil, hash)
    assert.notEqual(newBlock, oldBlock)
    await anvil.mine(160)
    const report = await scan()
    assert.equal(report.reorg?.flagged, 1)
    assert.equal(report.paid, 0, 'not paid twice')
    assert.equal(report.unmatched, 0, 'the same transfer, not a second one')

    const reference = await db.from('payment_references').where('order_id', order.id).first()
    assert.equal(String(reference.block_number), String(newBlock))
    const [flag] = await db.from('unmatched_payments').where('kind', 'reorged')
    assert.match(
      flag.reason,
      new RegExp(`from block ${oldBlock} .*in the new chain at block ${newBlock}`)
    )
    const found = await db
      .from('audit_log')
      .where('action', 'order.reorg_found_again')
      .where('subject_id', order.tradeId)
      .first()
    const after = JSON.parse(found.after)
    assert.equal(after.block, String(newBlock))
  }).timeout(120_000)
})

test.group('EVM chain: a load balancer with one node on another fork', (group) => {
  const anvil = new Anvil()
  const forked = new Anvil()
  let balancer: LoadBalancer | null = null
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }

  group.setup(async () => {
    await anvil.start()
    tokens = await deployTokens(anvil)
    return async () => {
      await balancer?.stop()
      await forked.stop()
      await anvil.stop()
    }
  })
  group.each.setup(() => resetDatabase())

  test('the payment on the main chain is credited; the cursor follows the main chain, never the other fork', async ({
    client,
    assert,
  }) => {
    const fixture = await configureEthereum(tokens, [anvil.url], 3)
    await scan()
    const order = await createEthOrder(client)
    const fork = await anvil.client.getBlockNumber()
    // The other node forked here and went its own way: 3 blocks of its own, none holding the payment.
    await forked.start(1, { url: anvil.url, block: fork })
    await forked.mine(3)
    const hash = await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    const paidIn = await blockOf(anvil, hash)
    await anvil.mine(8)

    balancer = await new LoadBalancer([anvil.url, forked.url], 'random', 7).start()
    await configureEthereum(tokens, [balancer.url], 3)
    for (
      let run = 0;
      run < 8 && (await Order.findOrFail(order.id)).status !== OrderStatus.PAID;
      run++
    ) {
      await chainScanner.scan({ network: 'ethereum' })
      const cursor = JSON.parse((await db.from('chain_cursors').first()).cursor)
      const main = await anvil.client.getBlock({ blockNumber: BigInt(cursor.block) })
      assert.equal(
        cursor.hash,
        main.hash,
        `the cursor stands on the main chain's block ${cursor.block}`
      )
      if ((await Order.findOrFail(order.id)).status !== OrderStatus.PAID) {
        assert.isTrue(BigInt(cursor.block) < paidIn, 'never past the uncredited payment')
      }
      await anvil.mine(1)
    }
    assert.equal((await Order.findOrFail(order.id)).status, OrderStatus.PAID)
    assert.isAbove(balancer.served[1], 0, 'the forked node answered too')
    assert.lengthOf(await db.from('unmatched_payments').where('kind', 'reorged'), 0)
  }).timeout(120_000)
})
