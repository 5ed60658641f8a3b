import walletAdmin from '#services/operators/wallet_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { FakeTronGrid } from '#tests/helpers/tron/fake_trongrid'
import { newTronAccount } from '#tests/helpers/tron/tron_transactions'
import {
  USDT_CONTRACT,
  baseUnits,
  newTronOrder,
  prepareTronNetwork,
  type TronTestNetwork,
} from '#tests/helpers/tron/tron_network'
import { scanOnce } from '#tests/helpers/scanning'

/**
 * Transactions that make more than one transfer: an exchange's batch
 * payout with several Transfer events (to one address, even of the same
 * amount, or to several), and contracts that send TRX themselves
 * (internal transactions, which TronGrid lists in a shape of their own).
 * Each transfer is reported once, with its own position, and pays at most
 * one order.
 */
const scanTron = () => scanOnce('tron')

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

/** Which order each position of a transaction paid. */
async function paidPositions(reference: string): Promise<Record<string, number>> {
  const rows = await db
    .from('payment_references')
    .where('reference', reference)
    .select('position', 'order_id')
  return Object.fromEntries(rows.map((row) => [row.position, Number(row.order_id)]))
}

/** Transaction ids whose receipts were asked for. */
function receiptLookups(fake: FakeTronGrid) {
  return fake
    .requestsTo('gettransactioninfobyid')
    .map((request) => JSON.parse(request.body).value as string)
}

test.group('TRON: several TRC-20 transfers in one transaction', (group) => {
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

  test('two Transfer events to one address pay two orders, each from its own log; a rescan reports neither again', async ({
    client,
    assert,
  }) => {
    const first = await newTronOrder(client)
    const second = await newTronOrder(client)
    assert.notEqual(first.actualAmount, second.actualAmount)
    const batch = fake.payTrc20Batch({
      from: network.payer,
      contract: USDT_CONTRACT,
      transfers: [
        { to: network.wallet, amount: baseUnits(first.actualAmount) },
        { to: network.wallet, amount: baseUnits(second.actualAmount) },
      ],
    })
    fake.mine(19)
    fake.requests = []
    const report = await scanTron()
    assert.equal(report.transfers, 2)
    assert.equal(report.paid, 2)
    assert.equal((await Order.findOrFail(first.id)).status, 2)
    assert.equal((await Order.findOrFail(second.id)).status, 2)
    assert.equal((await Order.findOrFail(second.id)).blockTransactionId, batch.txid)
    // Log 0 is the batch's Approval; the transfers are logs 1 and 2.
    assert.deepEqual(await paidPositions(batch.txid), { 'log:1': first.id, 'log:2': second.id })
    assert.deepEqual(
      receiptLookups(fake),
      [batch.txid],
      'one receipt for the transaction, not one per row'
    )

    fake.requests = []
    const again = await scanTron()
    assert.equal(again.transfers, 0)
    assert.lengthOf(receiptLookups(fake), 0)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('the same amount twice to one address: both transfers are reported, the second pays nothing more', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    const amount = baseUnits(order.actualAmount)
    const batch = fake.payTrc20Batch({
      from: network.payer,
      contract: USDT_CONTRACT,
      transfers: [
        { to: network.wallet, amount },
        { to: network.wallet, amount },
      ],
    })
    fake.mine(19)
    const report = await scanTron()
    assert.equal(report.transfers, 2)
    assert.equal(report.paid, 1)
    assert.equal(report.unmatched, 1)
    assert.deepEqual(await paidPositions(batch.txid), { 'log:1': order.id })
    const unmatched = await db.from('unmatched_payments').where('reference', batch.txid)
    assert.lengthOf(unmatched, 1)
    assert.equal(unmatched[0].position, 'log:2')
    assert.equal(unmatched[0].amount, order.actualAmount.replace(/0+$/, '').replace(/\.$/, ''))

    // Listed again by the next runs: nothing new.
    assert.equal((await scanTron()).transfers, 0)
    assert.equal(await countRows('unmatched_payments'), 1)
  })

  test('transfers to two watched addresses in one transaction pay the order on each', async ({
    client,
    assert,
  }) => {
    const onFirst = await newTronOrder(client)
    assert.equal(onFirst.receiveAddress, network.wallet)
    // A second wallet takes the next order; the first is still watched for its reservation.
    const second = newTronAccount().address
    await walletAdmin.add('tron', second)
    await walletAdmin.update('tron', network.wallet, { enabled: false })
    const onSecond = await newTronOrder(client)
    assert.equal(onSecond.receiveAddress, second)

    const batch = fake.payTrc20Batch({
      from: network.payer,
      contract: USDT_CONTRACT,
      transfers: [
        { to: newTronAccount().address, amount: 5_000_000n },
        { to: second, amount: baseUnits(onSecond.actualAmount) },
        { to: network.wallet, amount: baseUnits(onFirst.actualAmount) },
      ],
    })
    fake.mine(19)
    const report = await scanTron()
    assert.equal(report.transfers, 2, 'the transfer to an address nobody watches is none of ours')
    assert.equal(report.paid, 2)
    assert.deepEqual(await paidPositions(batch.txid), { 'log:2': onSecond.id, 'log:3': onFirst.id })
  })

  test('a listed transfer the successful receipt does not hold is kept as unreadable, never paid', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    // The index says the transaction paid the order's amount; its receipt says 1 USDT.
    const entry = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 1_000_000n,
    })
    fake.corruptListing(entry.txid, { value: baseUnits(order.actualAmount).toString() })
    fake.mine(19)
    const report = await scanTron()
    assert.equal(report.paid, 0)
    assert.equal(report.unreadable, 1)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    const [row] = await db.from('unmatched_payments').where('reference', entry.txid)
    assert.equal(row.kind, 'unreadable')
    assert.match(row.reason, /has no Transfer log .* although TronGrid lists one/)
  })

  test('submit-tx-hash of a batch pays each order with its own transfer, and refuses a third', async ({
    client,
    assert,
  }) => {
    const first = await newTronOrder(client)
    const second = await newTronOrder(client)
    const third = await newTronOrder(client)
    const batch = fake.payTrc20Batch({
      from: network.payer,
      contract: USDT_CONTRACT,
      transfers: [
        { to: network.wallet, amount: baseUnits(first.actualAmount) },
        { to: network.wallet, amount: baseUnits(second.actualAmount) },
      ],
    })
    fake.mine(19)

    const paidSecond = await submit(client, second.tradeId, batch.txid)
    assert.equal(paidSecond.body().status_code, 200, JSON.stringify(paidSecond.body()))
    const paidFirst = await submit(client, first.tradeId, batch.txid)
    assert.equal(paidFirst.body().status_code, 200, JSON.stringify(paidFirst.body()))
    assert.deepEqual(await paidPositions(batch.txid), { 'log:1': first.id, 'log:2': second.id })

    const refused = await submit(client, third.tradeId, batch.txid)
    assert.notEqual(refused.body().status_code, 200)
    assert.match(refused.body().message, /the order expects/)
    assert.equal((await Order.findOrFail(third.id)).status, 1)
  })
})

test.group('TRON: TRX sent by a contract (internal transactions)', (group) => {
  const fake = new FakeTronGrid()
  let network: TronTestNetwork
  const contract = newTronAccount().address

  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    network = await prepareTronNetwork(fake)
  })

  test('a contract forwarding TRX pays the order, named by its internal transaction; the call itself is not taken for TRX', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client, { token: 'trx' })
    const sun = baseUnits(order.actualAmount)
    const call = fake.callContract({
      from: network.payer,
      contract,
      internals: [
        { to: newTronAccount().address, sun: 1_000_000n },
        { to: network.wallet, sun },
      ],
    })
    fake.mine(19)

    // TronGrid lists both the call and its internal transaction to the address.
    const listing = await fetch(
      `${fake.url}/v1/accounts/${network.wallet}/transactions?only_to=true&search_internal=true`
    )
    const rows = ((await listing.json()) as { data: any[] }).data
    assert.lengthOf(rows, 2)
    assert.equal(rows[0].raw_data.contract[0].type, 'TriggerSmartContract')
    assert.deepEqual(rows[1].data, {
      note: 'call',
      rejected: false,
      call_value: { _: Number(sun) },
    })

    const report = await scanTron()
    assert.equal(report.transfers, 1)
    assert.equal(report.paid, 1)
    assert.deepEqual(await paidPositions(call.txid), { 'internal:1': order.id })
    const listings = fake.requestsTo('transactions')
    assert.isAbove(listings.length, 0)
    for (const request of listings) assert.equal(request.query.get('search_internal'), 'true')
  })

  test('a rejected internal transfer, a failed call and a TRC-10 asset pay no TRX order', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client, { token: 'trx' })
    const sun = baseUnits(order.actualAmount)
    const rejected = fake.callContract({
      from: network.payer,
      contract,
      internals: [{ to: network.wallet, sun, rejected: true }],
    })
    const failed = fake.callContract({
      from: network.payer,
      contract,
      internals: [{ to: network.wallet, sun }],
      fail: true,
    })
    const trc10 = fake.callContract({
      from: network.payer,
      contract,
      internals: [{ to: network.wallet, sun, tokenId: '1002000' }],
    })
    fake.mine(19)

    const report = await scanTron()
    assert.equal(report.transfers, 0)
    assert.equal(report.unreadable, 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('unmatched_payments'), 0)

    const answers = await Promise.all(
      [rejected, failed, trc10].map((entry) => submit(client, order.tradeId, entry.txid))
    )
    assert.match(answers[0].body().message, /failed on chain/)
    assert.match(answers[1].body().message, /failed on chain/)
    // TRC-10 is another asset: nothing the gateway knows moved.
    assert.match(answers[2].body().message, /transfers nothing/)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('submit-tx-hash of a contract call that sent the TRX pays the order', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client, { token: 'trx' })
    const call = fake.callContract({
      from: network.payer,
      contract,
      internals: [{ to: network.wallet, sun: baseUnits(order.actualAmount) }],
      // The index never shows it: the receipt alone tells.
      indexed: false,
    })
    fake.mine(19)
    const response = await submit(client, order.tradeId, call.txid)
    assert.equal(response.body().status_code, 200, JSON.stringify(response.body()))
    assert.deepEqual(await paidPositions(call.txid), { 'internal:0': order.id })
  })

  test('two internal transfers of one amount to one address are two transfers', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client, { token: 'trx' })
    const sun = baseUnits(order.actualAmount)
    const call = fake.callContract({
      from: network.payer,
      contract,
      internals: [
        { to: network.wallet, sun },
        { to: network.wallet, sun },
      ],
    })
    fake.mine(19)
    const report = await scanTron()
    assert.equal(report.transfers, 2)
    assert.equal(report.paid, 1)
    assert.deepEqual(await paidPositions(call.txid), { 'internal:0': order.id })
    const [unmatched] = await db.from('unmatched_payments').where('reference', call.txid)
    assert.equal(unmatched.position, 'internal:1')
  })
})
