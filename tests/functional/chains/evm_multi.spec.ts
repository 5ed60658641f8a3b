import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import { parseUnits } from 'viem'
import db from '@adonisjs/lucid/services/db'
import Order, { OrderStatus } from '#models/order'
import chainScanner from '#services/chain_scanner'
import { resetDatabase } from '#tests/helpers/database'
import { Anvil } from '#tests/helpers/evm/anvil'
import { RpcProxy } from '#tests/helpers/evm/rpc_proxy'
import {
  configureEthereum,
  createEthOrder,
  deployTokens,
  type EvmFixture,
} from '#tests/helpers/evm/evm_setup'
import { resetTraceSupport } from '#plugins/evm/evm_traces'

/**
 * Payments that are not one plain transfer per transaction, on a real
 * node: a disperse contract paying two orders in one transaction (tokens:
 * two logs; the native coin: two internal calls, read from traces), and a
 * contract forwarding ETH to a watched address (credited from traces; with
 * no traces, the balance watch records it as unexplained).
 */

const submit = (client: any, tradeId: string, reference: string) =>
  client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')

async function scan() {
  const [report] = await chainScanner.scan({ network: 'ethereum' })
  if (report.detail.startsWith('scan failed')) throw new Error(report.detail)
  return report
}

async function status(order: Order) {
  return (await Order.findOrFail(order.id)).status
}

test.group('EVM chain: several payments in one transaction, value sent by contracts', (group) => {
  const anvil = new Anvil()
  let proxy: RpcProxy
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  let fixture: EvmFixture
  let disperse: `0x${string}`
  let forwarder: `0x${string}`

  group.setup(async () => {
    await anvil.start()
    tokens = await deployTokens(anvil)
    disperse = await anvil.deployPayer('Disperse')
    forwarder = await anvil.deployPayer('Forwarder')
    proxy = await new RpcProxy(anvil.url).start()
    return async () => {
      await proxy.stop()
      await anvil.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    proxy.reset()
    resetTraceSupport()
    fixture = await configureEthereum(tokens, [proxy.url], 1)
    await scan()
  })

  test('a disperse contract pays two USDT orders in one transaction: both paid, each by its own log', async ({
    client,
    assert,
  }) => {
    const first = await createEthOrder(client)
    const second = await createEthOrder(client)
    const values = [parseUnits(first.actualAmount, 6), parseUnits(second.actualAmount, 6)]
    await anvil.callPayer('TestToken', fixture.usdt, 'approve', [disperse, values[0] + values[1]])
    const hash = await anvil.callPayer('Disperse', disperse, 'disperseToken', [
      fixture.usdt,
      [fixture.wallet, fixture.wallet],
      values,
    ])
    await anvil.mine(1)
    const report = await scan()
    assert.equal(report.paid, 2, report.detail)
    const rows = await db
      .from('payment_references')
      .orderBy('position')
      .select('reference', 'position', 'order_id')
    assert.deepEqual(
      rows.map((row) => [row.reference, row.position, Number(row.order_id)]),
      [
        [hash.toLowerCase(), 'log:0', first.id],
        [hash.toLowerCase(), 'log:1', second.id],
      ]
    )
    for (const order of [first, second])
      assert.equal((await Order.findOrFail(order.id)).blockTransactionId, hash.toLowerCase())
  }).timeout(60_000)

  test('submit-tx-hash of a disperse transaction pays each order with its own transfer; a third order of another amount is refused', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('ethereum', { confirmations: 1 })
    const first = await createEthOrder(client)
    const second = await createEthOrder(client)
    const third = await createEthOrder(client)
    const values = [parseUnits(first.actualAmount, 6), parseUnits(second.actualAmount, 6)]
    await anvil.callPayer('TestToken', fixture.usdt, 'approve', [disperse, values[0] + values[1]])
    const hash = await anvil.callPayer('Disperse', disperse, 'disperseToken', [
      fixture.usdt,
      [fixture.wallet, fixture.wallet],
      values,
    ])
    ;(await submit(client, first.tradeId, hash)).assertStatus(200)
    ;(await submit(client, second.tradeId, hash)).assertStatus(200)
    const refused = await submit(client, third.tradeId, hash)
    refused.assertStatus(400)
    assert.match(refused.body().message, /transfers .* USDT, the order expects/)
    assert.equal(await status(third), OrderStatus.WAITING)
    // The scan sees both transfers already used.
    await anvil.mine(1)
    const report = await scan()
    assert.equal(report.paid, 0)
    assert.equal(report.unmatched, 0)
  }).timeout(60_000)

  test('a disperse contract pays two ETH orders by internal calls: read from the traces, both paid', async ({
    client,
    assert,
  }) => {
    const first = await createEthOrder(client, { token: 'eth' })
    const second = await createEthOrder(client, { token: 'eth' })
    const values = [parseUnits(first.actualAmount, 18), parseUnits(second.actualAmount, 18)]
    const hash = await anvil.callPayer(
      'Disperse',
      disperse,
      'disperseEther',
      [[fixture.wallet, fixture.wallet], values],
      values[0] + values[1]
    )
    await anvil.mine(1)
    const report = await scan()
    assert.equal(report.paid, 2, report.detail)
    const rows = await db
      .from('payment_references')
      .orderBy('position')
      .select('reference', 'position')
    assert.deepEqual(
      rows.map((row) => [row.reference, row.position]),
      [
        [hash.toLowerCase(), 'trace:0'],
        [hash.toLowerCase(), 'trace:1'],
      ]
    )
    assert.isAbove(proxy.calls.get('debug_traceBlockByHash') ?? 0, 0)
  }).timeout(60_000)

  test('submit-tx-hash of a disperse ETH transaction pays each order with its internal transfer', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('ethereum', { confirmations: 1 })
    const first = await createEthOrder(client, { token: 'eth' })
    const second = await createEthOrder(client, { token: 'eth' })
    const values = [parseUnits(first.actualAmount, 18), parseUnits(second.actualAmount, 18)]
    const hash = await anvil.callPayer(
      'Disperse',
      disperse,
      'disperseEther',
      [[fixture.wallet, fixture.wallet], values],
      values[0] + values[1]
    )
    ;(await submit(client, second.tradeId, hash)).assertStatus(200)
    ;(await submit(client, first.tradeId, hash)).assertStatus(200)
    const rows = await db
      .from('payment_references')
      .orderBy('position')
      .select('position', 'order_id', 'source')
    assert.deepEqual(
      rows.map((row) => [row.position, Number(row.order_id), row.source]),
      [
        ['trace:0', first.id, 'submit'],
        ['trace:1', second.id, 'submit'],
      ]
    )
    // The scan names them alike: nothing paid twice, nothing unmatched.
    await anvil.mine(1)
    const report = await scan()
    assert.equal(report.paid, 0)
    assert.equal(report.unmatched, 0)
  }).timeout(60_000)

  test('ETH forwarded by a contract pays the order (traces); one forwarded then reverted pays nothing', async ({
    client,
    assert,
  }) => {
    const paid = await createEthOrder(client, { token: 'eth' })
    const reverted = await createEthOrder(client, { token: 'eth' })
    await anvil.callPayer(
      'Forwarder',
      forwarder,
      'forward',
      [fixture.wallet],
      parseUnits(paid.actualAmount, 18)
    )
    await anvil.callPayer(
      'Forwarder',
      forwarder,
      'forwardAndFail',
      [fixture.wallet],
      parseUnits(reverted.actualAmount, 18),
      200_000n
    )
    await anvil.mine(1)
    const report = await scan()
    assert.equal(await status(paid), OrderStatus.PAID, report.detail)
    assert.equal(await status(reverted), OrderStatus.WAITING)
    const row = await db.from('payment_references').where('order_id', paid.id).first()
    assert.equal(row.position, 'trace:0')
    assert.equal(
      await db
        .from('unmatched_payments')
        .count('* as total')
        .first()
        .then((r: any) => Number(r.total)),
      0
    )
  }).timeout(60_000)

  test('a node with no traces: the forwarded ETH is not paid, and the balance watch records it as unexplained', async ({
    client,
    assert,
  }) => {
    // Neither dialect offered, as on most public endpoints (counted from here).
    proxy.reset()
    resetTraceSupport()
    proxy.unsupported = new Set(['debug_traceBlockByHash', 'trace_block'])
    const order = await createEthOrder(client, { token: 'eth' })
    await anvil.mine(1)
    await scan() // the first balance reading
    assert.isNotNull(await db.from('balance_readings').where('contract', '').first())

    await anvil.callPayer(
      'Forwarder',
      forwarder,
      'forward',
      [fixture.wallet],
      parseUnits(order.actualAmount, 18)
    )
    await anvil.mine(1)
    await db.from('balance_readings').update({ read_at: 0 }) // the next reading is due
    await scan()
    assert.equal(await status(order), OrderStatus.WAITING)
    const [row] = await db.from('unmatched_payments').where('kind', 'unexplained')
    assert.equal(row.to_address, fixture.wallet)
    assert.equal(row.token, 'ETH')
    assert.equal(row.amount, order.actualAmount.replace(/\.?0+$/, ''))
    // Asked once per endpoint, then remembered as absent: not asked for every block.
    assert.equal(proxy.calls.get('debug_traceBlockByHash'), 1)
    assert.equal(proxy.calls.get('trace_block'), 1)
  }).timeout(60_000)

  test('traces=off: nothing is asked; the same forwarded ETH is recorded as unexplained', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('ethereum', { options: { traces: 'off' } })
    proxy.reset()
    const order = await createEthOrder(client, { token: 'eth' })
    await anvil.mine(1)
    await scan()
    await anvil.callPayer(
      'Forwarder',
      forwarder,
      'forward',
      [fixture.wallet],
      parseUnits(order.actualAmount, 18)
    )
    await anvil.mine(1)
    await db.from('balance_readings').update({ read_at: 0 })
    await scan()
    assert.equal(await status(order), OrderStatus.WAITING)
    assert.lengthOf(await db.from('unmatched_payments').where('kind', 'unexplained'), 1)
    assert.isUndefined(proxy.calls.get('debug_traceBlockByHash'))
  }).timeout(60_000)
})
