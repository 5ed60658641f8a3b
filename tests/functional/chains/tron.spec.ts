import walletAdmin from '#services/operators/wallet_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import chainScanner from '#services/chain_scanner'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { RpcPool } from '#chains/rpc_pool'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { merchantVerifiesCallback } from '#tests/helpers/merchant'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { CLOSED_URL, runAce } from '#tests/helpers/processes'
import { FakeTronGrid } from '#tests/helpers/tron/fake_trongrid'
import { newTronAccount } from '#tests/helpers/tron/tron_transactions'
import {
  USDT_CONTRACT,
  baseUnits,
  newTronOrder,
  prepareTronNetwork,
  type TronTestNetwork,
} from '#tests/helpers/tron/tron_network'
import { persistedCursor, scanOnce } from '#tests/helpers/scanning'

const scanTron = () => scanOnce('tron')

const savedCursor = () => persistedCursor('tron')

test.group('TRON: payments found by the scanner, end to end', (group) => {
  const fake = new FakeTronGrid()
  const merchant = new MerchantServer()
  let network: TronTestNetwork

  group.setup(async () => {
    await fake.start()
    await merchant.start()
    return async () => {
      await fake.stop()
      await merchant.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    network = await prepareTronNetwork(fake)
    merchant.reset()
  })

  test('USDT (TRC-20): paid once solidified, and the merchant gets a signed callback', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client, { token: 'usdt', notify_url: merchant.notifyUrl })
    assert.equal(order.receiveAddress, network.wallet)
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })

    // In a block, but not solidified: not credited yet.
    assert.equal((await scanTron()).transfers, 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)

    fake.mine(19)
    const report = await scanTron()
    assert.equal(report.paid, 1)
    assert.equal(
      report.transfers,
      1,
      'the TRC-20 call also listed by the account index is not taken for TRX'
    )
    const settled = await Order.findOrFail(order.id)
    assert.equal(settled.status, 2)
    assert.equal(settled.blockTransactionId, paid.txid)
    assert.match(paid.txid, /^[0-9a-f]{64}$/)

    const delivery = await callbackDeliverer.runOnce()
    assert.equal(delivery.delivered, 1)
    assert.lengthOf(merchant.requests, 1)
    const body = JSON.parse(merchant.requests[0].body)
    assert.deepInclude(body, {
      trade_id: order.tradeId,
      token: 'USDT',
      receive_address: network.wallet,
      block_transaction_id: paid.txid,
      status: 2,
    })
    assert.isTrue(merchantVerifiesCallback(body))
    assert.isFalse(merchantVerifiesCallback({ ...body, block_transaction_id: 'forged' }))
  })

  test('TRX (native) through the chains:scan command in a child process', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client, { token: 'trx', notify_url: merchant.notifyUrl })
    assert.equal(order.token, 'TRX')
    const paid = fake.payTrx({
      from: network.payer,
      to: network.wallet,
      sun: baseUnits(order.actualAmount),
    })
    fake.mine(19)

    const result = await runAce(['chains:scan', '--network', 'tron'])
    assert.equal(result.code, 0, result.stdout + result.stderr)
    assert.match(result.stdout, /tron: 1 transfer\(s\), 1 paid, 0 unmatched/)
    const settled = await Order.findOrFail(order.id)
    assert.equal(settled.status, 2)
    assert.equal(settled.blockTransactionId, paid.txid)

    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 1)
    const body = JSON.parse(merchant.requests[0].body)
    assert.deepInclude(body, {
      trade_id: order.tradeId,
      token: 'TRX',
      block_transaction_id: paid.txid,
      status: 2,
    })
    assert.isTrue(merchantVerifiesCallback(body))
  })

  test('a failed TRX transfer is not credited', async ({ client, assert }) => {
    const order = await newTronOrder(client, { token: 'trx' })
    fake.payTrx({
      from: network.payer,
      to: network.wallet,
      sun: baseUnits(order.actualAmount),
      fail: true,
    })
    fake.mine(19)
    const report = await scanTron()
    assert.equal(report.transfers, 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('a payment made while the scanner was stopped is found from the persisted cursor', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    await scanTron()
    const cursor = await savedCursor()
    assert.isNumber(cursor.since)

    // The scanner is "stopped": the payment is made and solidified meanwhile.
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    fake.requests = []

    const result = await runAce(['chains:scan', '--network', 'tron'])
    assert.equal(result.code, 0, result.stdout + result.stderr)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
    // The fresh process listed from where the previous run stopped.
    const listings = fake.requestsTo('trc20')
    assert.isAbove(listings.length, 0)
    for (const listing of listings)
      assert.equal(listing.query.get('min_timestamp'), String(cursor.since))
  })

  test('a transfer that pays no order is recorded as unmatched', async ({ client, assert }) => {
    const order = await newTronOrder(client)
    const wrong = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount) - 10_000n,
    })
    fake.mine(19)
    const report = await scanTron()
    assert.equal(report.unmatched, 1)
    const rows = await UnmatchedPayment.all()
    assert.lengthOf(rows, 1)
    assert.equal(rows[0].reference, wrong.txid)
    assert.equal(rows[0].toAddress, network.wallet)
    assert.equal(rows[0].token, 'USDT')
    assert.equal(rows[0].amount, '13.79')
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('scanning again and overlapping windows never pay twice', async ({ client, assert }) => {
    const order = await newTronOrder(client, { notify_url: merchant.notifyUrl })
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    assert.equal((await scanTron()).paid, 1)

    // The next run lists the same window again (overlap): already reported, no lookup.
    fake.requests = []
    const again = await scanTron()
    assert.equal(again.transfers, 0)
    assert.lengthOf(fake.requestsTo('/walletsolidity/gettransactioninfobyid'), 0)

    // A lost cursor (first scan again) reports it once more: the core refuses it.
    await db.from('chain_cursors').where('network', 'tron').delete()
    const rescanned = await scanTron()
    assert.equal(rescanned.transfers, 1)
    assert.equal(rescanned.paid, 0)
    assert.equal(await countRows('orders', { status: 2 }), 1)
    assert.equal(await countRows('callbacks'), 1)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('the payment URI names the token contract for TRC-20 and only the amount for TRX', async ({
    client,
    assert,
  }) => {
    const usdt = await newTronOrder(client, { token: 'usdt' })
    const trx = await newTronOrder(client, { token: 'trx' })
    const usdtUri = (await client.get(`/pay/payment-uri/${usdt.tradeId}`)).body().data.uri
    const trxUri = (await client.get(`/pay/payment-uri/${trx.tradeId}`)).body().data.uri
    assert.equal(usdtUri, `tron:${network.wallet}?token=${USDT_CONTRACT}&amount=13.8`)
    assert.equal(trxUri, `tron:${network.wallet}?amount=50`)
  })
})

test.group('TRON: confirmations, index delay, API key, failover', (group) => {
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

  test('more confirmations than solidification: credited at that depth, even long after', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('tron', { options: { lookbackMinutes: '10' } })
    await db.from('chains').where('network', 'tron').update({ confirmations: 40 })
    const order = await newTronOrder(client)
    await scanTron()
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    // Solidified, depth 36 of 40, and the solid head's time is 16 minutes
    // past the payment: beyond the 10-minute look-back.
    fake.mine(35, 60_000)
    const early = await scanTron()
    assert.equal(early.transfers, 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    const cursor = await savedCursor()
    assert.isAbove(cursor.since, order.createdAt, 'the window itself moved past the payment')
    assert.deepEqual(Object.keys(cursor.lagging), [`${network.wallet}|${USDT_CONTRACT}`])

    fake.mine(4, 60_000)
    const report = await scanTron()
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.deepEqual((await savedCursor()).lagging, {})
  })

  test('a transfer TronGrid indexes late (within the default look-back) is still found', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    await scanTron()
    const first = await savedCursor()
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
      indexed: false,
    })
    // The solid head moves 29.5 minutes of block time past the payment
    // while the index still lacks it.
    fake.mine(78, 30_000)
    assert.equal((await scanTron()).transfers, 0)
    const cursor = await savedCursor()
    assert.isAbove(cursor.since, first.since, 'the window moved on')
    assert.isAtMost(cursor.since, paid.timestamp, 'and still covers the payment')

    fake.indexAll()
    assert.equal((await scanTron()).paid, 1)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
  })

  test('one listing per address and token, paged with fingerprints; dust dropped before any receipt lookup', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    // 205 confirmed dust transfers (address poisoning) before the payment: two pages of 200.
    for (let index = 0; index < 205; index++) {
      fake.payTrc20({
        from: network.payer,
        to: network.wallet,
        contract: USDT_CONTRACT,
        amount: BigInt(index + 1),
      })
    }
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    fake.requests = []
    const report = await scanTron()
    assert.equal(report.paid, 1)
    assert.equal(report.dust, 205)
    assert.equal(report.unmatched, 0)
    assert.equal(report.transfers, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
    const receipts = fake
      .requestsTo('gettransactioninfobyid')
      .map((request) => JSON.parse(request.body).value)
    assert.deepEqual(receipts, [paid.txid], 'one receipt: the payment; none for the dust')
    assert.equal(await countRows('unmatched_payments'), 0)

    const usdt = fake
      .requestsTo('trc20')
      .filter((request) => request.query.get('contract_address') === USDT_CONTRACT)
    assert.lengthOf(usdt, 2)
    assert.isNull(usdt[0].query.get('fingerprint'))
    assert.isNotNull(usdt[1].query.get('fingerprint'))
    for (const request of usdt) {
      assert.equal(request.query.get('only_to'), 'true')
      // unsolidified rows are listed too (sightings); the scanner tells them apart by the solid head
      assert.isNull(request.query.get('only_confirmed'))
      assert.equal(request.query.get('limit'), '200')
    }
    // Plus one USDC listing; the account index also lists the TRC-20 calls
    // (two pages), none of which is taken for a TRX transfer.
    assert.lengthOf(fake.requestsTo('trc20'), 3)
    assert.lengthOf(fake.requestsTo('transactions'), 2)
  })

  test('TRON-PRO-API-KEY is sent once chain:set --api-key is configured', async ({ assert }) => {
    await scanTron()
    assert.isAbove(fake.requests.length, 0)
    for (const request of fake.requests) assert.isUndefined(request.headers['tron-pro-api-key'])

    const result = await runAce(['chain:set', 'tron', '--api-key', 'test-trongrid-key'])
    assert.equal(result.code, 0, result.stdout + result.stderr)
    fake.requests = []
    await scanTron()
    assert.isAbove(fake.requests.length, 0)
    for (const request of fake.requests)
      assert.equal(request.headers['tron-pro-api-key'], 'test-trongrid-key')
  })

  test('RPC failover: the first URL down, the second answers', async ({ client, assert }) => {
    const dead = CLOSED_URL
    const down = new FakeTronGrid()
    await down.start()
    down.down = true
    try {
      await db
        .from('chains')
        .where('network', 'tron')
        .update({ rpc_urls: JSON.stringify([dead, down.url, fake.url]) })
      RpcPool.reset()
      const order = await newTronOrder(client)
      fake.payTrc20({
        from: network.payer,
        to: network.wallet,
        contract: USDT_CONTRACT,
        amount: baseUnits(order.actualAmount),
      })
      fake.mine(19)
      const report = await scanTron()
      assert.equal(report.paid, 1)
      assert.isAbove(down.requests.length, 0, 'the 503 endpoint was tried')
      assert.isAtLeast(RpcPool.health(dead)!.failures, 1)
      assert.isAtLeast(RpcPool.health(down.url)!.failures, 1)
    } finally {
      await down.stop()
    }
  })

  test('every endpoint down: the scan fails and keeps its cursor', async ({ client, assert }) => {
    await newTronOrder(client)
    await scanTron()
    const before = await savedCursor()
    fake.down = true
    const [report] = await chainScanner.scan({ network: 'tron' })
    assert.isFalse(report.scanned)
    assert.match(report.detail, /HTTP 503/)
    assert.deepEqual(await savedCursor(), before)
  })
})

test.group('TRON: watched addresses', (group) => {
  const fake = new FakeTronGrid()
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
  })

  test('cost follows watched addresses × tokens, not open orders', async ({ client, assert }) => {
    const network = await prepareTronNetwork(fake)
    for (let index = 0; index < 5; index++) await newTronOrder(client)
    // The balance watch is due at the first run: one balance read per
    // address × token, between two solid head reads (header only).
    await scanTron()
    const balanceReads = [
      ...fake.requestsTo('getaccount'),
      ...fake.requestsTo('triggerconstantcontract'),
    ]
    assert.lengthOf(balanceReads, 3)
    assert.equal(fake.requests.length, 2 + 3 + 2 + 3)

    // Then, while that reading is held (and after), a run costs two head reads and three listings.
    fake.requests = []
    await scanTron()
    assert.equal(fake.requests.length, 2 + 3, 'two head lookups, three listings for one address')
    // The heads are read header-only (getblock, detail false), never as full blocks (getnowblock).
    assert.deepEqual(
      fake.requests
        .filter((request) => request.method === 'POST')
        .map((request) => [request.path, JSON.parse(request.body)]),
      [
        ['/wallet/getblock', { detail: false }],
        ['/walletsolidity/getblock', { detail: false }],
      ]
    )

    await walletAdmin.add('tron', newTronAccount().address)
    fake.requests = []
    await scanTron()
    assert.equal(fake.requests.length, 2 + 6)
    assert.isOk(network)
  })
})
