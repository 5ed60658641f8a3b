import { test } from '@japa/runner'
import { toNano, beginCell, type Address } from '@ton/core'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import callbackDeliverer from '#callbacks/callback_deliverer'
import settings from '#settings/settings_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { createOrder, merchantVerifiesCallback, orderParams } from '#tests/helpers/merchant'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { runAce } from '#tests/helpers/processes'
import { tonReference } from '#tests/helpers/ton/ton_test_chain'
import {
  baseUnits,
  configureTon,
  startTonFixture,
  storedWallet,
  type TonFixture,
} from '#tests/helpers/ton/ton_setup'
import { scanOnce } from '#tests/helpers/scanning'
import { freshTreasury } from '#tests/helpers/ton/ton_orders'

async function createTonOrder(client: any, overrides: Record<string, unknown> = {}) {
  const response = await createOrder(
    client,
    orderParams({ network: 'ton', token: 'usdt', amount: 100, ...overrides })
  )
  if (response.status() !== 200) throw new Error(JSON.stringify(response.body()))
  return Order.findByOrFail('trade_id', response.body().data.trade_id)
}

const scanTon = () => scanOnce('ton')

function comment(text: string) {
  return beginCell().storeUint(0, 32).storeStringTail(text).endCell()
}

/**
 * A fresh deployed receiving wallet per test: no history from other tests.
 * Named by ton_orders' counter, shared by every TON spec file of the
 * process: the sandbox derives a treasury from its name, and what this
 * process has learnt of one (its jetton wallets) must not meet another
 * file's test under the same name.
 */
async function freshShop(fixture: TonFixture) {
  return freshTreasury(fixture, 'shop')
}

test.group('TON: scanning the sandbox through TonClient and a fake toncenter', (group) => {
  const merchant = new MerchantServer()
  let fixture: TonFixture
  let shop: Address

  group.setup(async () => {
    fixture = await startTonFixture()
    await merchant.start()
    return async () => {
      await fixture.toncenter.stop()
      await merchant.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    shop = (await freshShop(fixture)).address
    await configureTon(fixture, [shop])
    merchant.reset()
  })

  test('USDT: order over HTTP → jetton transfer → chains:scan (ace) → paid → signed callback', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client, { notify_url: merchant.notifyUrl })
    assert.equal(order.receiveAddress, storedWallet(shop))
    assert.equal(order.actualAmount, '13.8')
    await scanTon() // the cursor exists before the payment

    const { transaction } = await fixture.chain.payJetton(
      fixture.payer,
      fixture.usdt,
      shop,
      13_800_000n
    )
    assert.isDefined(transaction, 'the notification reached the shop')
    const result = await runAce(['chains:scan', '--network', 'ton'])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    assert.match(result.stdout, /ton: 1 transfer\(s\), 1 paid/)

    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, tonReference(transaction!, shop))

    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 1)
    const body = JSON.parse(merchant.requests[0].body)
    assert.equal(body.trade_id, order.tradeId)
    assert.equal(body.token, 'USDT')
    assert.equal(body.block_transaction_id, tonReference(transaction!, shop))
    assert.strictEqual(body.actual_amount, 13.8)
    assert.isTrue(merchantVerifiesCallback(body))
  }).timeout(60_000)

  test('TON: a native transfer pays a TON order, signed callback', async ({ client, assert }) => {
    const order = await createTonOrder(client, { token: 'ton', notify_url: merchant.notifyUrl })
    assert.equal(order.actualAmount, '5')
    await scanTon()
    const { transaction } = await fixture.chain.payTon(fixture.payer, shop, toNano('5'), {
      body: comment('order'),
    })
    const report = await scanTon()
    assert.equal(report.paid, 1)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, tonReference(transaction, shop))

    await callbackDeliverer.runOnce()
    const body = JSON.parse(merchant.requests[0].body)
    assert.equal(body.token, 'TON')
    assert.strictEqual(body.actual_amount, 5)
    assert.isTrue(merchantVerifiesCallback(body))
  })

  test('an undeployed wallet: the notification transaction is aborted, yet the jetton (and TON) count', async ({
    client,
    assert,
  }) => {
    await db.from('wallets').delete()
    const fresh = fixture.chain.undeployedAddress()
    await configureTon(fixture, [fresh])
    const usdtOrder = await createTonOrder(client)
    const tonOrder = await createTonOrder(client, { token: 'ton' })
    await scanTon()

    const jetton = await fixture.chain.payJetton(fixture.payer, fixture.usdt, fresh, 13_800_000n)
    const description = jetton.transaction!.description
    assert.equal(
      description.type === 'generic' && description.aborted,
      true,
      'the owner transaction is aborted'
    )
    assert.equal(await fixture.chain.jettonBalance(fixture.usdt, fresh), 13_800_000n)
    const native = await fixture.chain.payTon(fixture.payer, fresh, toNano('5'), { bounce: false })

    const report = await scanTon()
    assert.equal(report.paid, 2)
    assert.equal(
      (await Order.findOrFail(usdtOrder.id)).blockTransactionId,
      tonReference(jetton.transaction!, fresh)
    )
    assert.equal(
      (await Order.findOrFail(tonOrder.id)).blockTransactionId,
      tonReference(native.transaction, fresh)
    )
  })

  test("a forged transfer_notification and another jetton's notification are not credited", async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client)
    await scanTon()
    // a plain wallet claims 13.8 USDT
    await fixture.chain.forgeNotification(fixture.payer, shop, 13_800_000n)
    // a real jetton wallet, of a jetton that is not our USDT
    const fake = await fixture.chain.payJetton(fixture.payer, fixture.fakeUsdt, shop, 13_800_000n)
    assert.isDefined(fake.transaction)

    const report = await scanTon()
    assert.equal(report.transfers, 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('unmatched_payments'), 0)

    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_800_000n)
    assert.equal((await scanTon()).paid, 1)
  })

  test('a bounced TON transfer is not credited', async ({ client, assert }) => {
    await db.from('wallets').delete()
    const fresh = fixture.chain.undeployedAddress()
    await configureTon(fixture, [fresh])
    const order = await createTonOrder(client, { token: 'ton' })
    await scanTon()
    const { transaction } = await fixture.chain.payTon(fixture.payer, fresh, toNano('5'), {
      bounce: true,
    })
    const description = transaction.description
    assert.equal(
      description.type === 'generic' && description.bouncePhase?.type,
      'ok',
      'the message bounced'
    )

    await scanTon()
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('a TON transfer whose transaction failed is not credited', async ({ client, assert }) => {
    await db.from('wallets').delete()
    const rejecting = await fixture.chain.deployRejectingReceiver(fixture.payer)
    await configureTon(fixture, [rejecting])
    const order = await createTonOrder(client, { token: 'ton' })
    await scanTon()
    const { transaction } = await fixture.chain.payTon(fixture.payer, rejecting, toNano('5'), {
      bounce: false,
      body: comment('pay'),
    })
    const description = transaction.description
    const compute = description.type === 'generic' ? description.computePhase : null
    assert.isTrue(compute?.type === 'vm' && !compute.success, 'the compute phase failed')

    await scanTon()
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    // (its deployment, 1 TON, is a real incoming transfer: unmatched)
    assert.equal(
      await countRows('unmatched_payments', { reference: tonReference(transaction, rejecting) }),
      0
    )
  })

  test('a payment made while the scanner was stopped is found by a fresh process from the stored cursor', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client)
    await scanTon()
    const before = (await db.from('chain_cursors').where('network', 'ton').first()).cursor
    await fixture.chain.payTon(fixture.payer, shop, toNano('0.3')) // unrelated traffic
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_800_000n)

    const result = await runAce(['chains:scan', '--network', 'ton'])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    const after = (await db.from('chain_cursors').where('network', 'ton').first()).cursor
    assert.notEqual(after, before)
    assert.equal(
      JSON.parse(after).wallets[storedWallet(shop)].done.lt,
      fixture.chain.transactionsOf(shop)[0].lt.toString()
    )

    const again = await runAce(['chains:scan', '--network', 'ton'])
    assert.match(again.stdout, /ton: 0 transfer\(s\)/)
  }).timeout(60_000)

  test('the first scan looks back to the oldest open order', async ({ client, assert }) => {
    const order = await createTonOrder(client)
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_800_000n)
    const report = await scanTon() // no cursor yet
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
  })

  test('a transfer that matches no order is recorded as unmatched', async ({ client, assert }) => {
    await createTonOrder(client)
    await scanTon()
    const { transaction } = await fixture.chain.payJetton(
      fixture.payer,
      fixture.usdt,
      shop,
      13_790_000n
    )
    const report = await scanTon()
    assert.equal(report.unmatched, 1)
    const row = await UnmatchedPayment.firstOrFail()
    assert.equal(row.reference, tonReference(transaction!, shop))
    assert.equal(row.amount, '13.79')
    assert.equal(row.token, 'USDT')
    assert.equal(row.toAddress, storedWallet(shop))
  })

  test('one transfer never pays twice, even when scanned again from the start', async ({
    client,
    assert,
  }) => {
    const first = await createTonOrder(client)
    await scanTon()
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_800_000n)
    await scanTon()
    assert.equal((await Order.findOrFail(first.id)).status, 2)
    const second = await createTonOrder(client) // the freed amount again
    assert.equal(second.actualAmount, first.actualAmount)
    await db.from('chain_cursors').update({ cursor: '' }) // rescan from the oldest open order
    await scanTon()
    await scanTon()
    assert.equal((await Order.findOrFail(second.id)).status, 1)
    assert.equal(await countRows('callbacks'), 1)
  })

  test('a run is bounded: it stops early (caughtUp false) and the next runs go on where it stopped', async ({
    assert,
  }) => {
    await scanTon()
    await settings.set('chains.max_blocks_per_scan', '2')
    const amounts = ['0.11', '0.12', '0.13', '0.14', '0.15']
    for (const amount of amounts) await fixture.chain.payTon(fixture.payer, shop, toNano(amount))

    const reports = [await scanTon()]
    while (!reports.at(-1)!.caughtUp) reports.push(await scanTon())
    assert.deepEqual(
      reports.map((report) => [report.transfers, report.caughtUp]),
      [
        [2, false],
        [2, false],
        [1, true],
      ]
    )
    const rows = await UnmatchedPayment.query().orderBy('amount')
    assert.deepEqual(
      rows.map((row) => row.amount),
      amounts
    )
    // newer transactions that came during the walk are taken by the next walk
    await fixture.chain.payTon(fixture.payer, shop, toNano('0.16'))
    assert.equal((await scanTon()).transfers, 1)
  })

  test('cost per scan: one getTransactions per watched wallet and per jetton wallet, whatever the number of open orders', async ({
    client,
    assert,
  }) => {
    const second = (await freshShop(fixture)).address
    await configureTon(fixture, [second])
    for (let index = 0; index < 4; index++) await createTonOrder(client)
    await scanTon()
    fixture.toncenter.reset()
    await scanTon()
    // each wallet (TON, notified jettons) and its USDT jetton wallet (transfers without notification)
    assert.deepEqual(fixture.toncenter.calls, [
      'getTransactions',
      'getTransactions',
      'getTransactions',
      'getTransactions',
    ])

    // notified jetton transfers cost nothing more: the jetton wallet addresses are known for the process
    // (amounts above the dust bar: half the smallest watched order, 6.9)
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 10_000_000n)
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 11_000_000n)
    fixture.toncenter.reset()
    assert.equal((await scanTon()).transfers, 2)
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 12_000_000n)
    assert.equal((await scanTon()).transfers, 1)
    assert.equal(fixture.toncenter.calls.filter((method) => method === 'runGetMethod').length, 0)
    assert.equal(fixture.toncenter.calls.length, 8)

    // a transfer without notification costs one get_wallet_address per payer (its jetton wallet), once per process
    const payer = await freshTreasury(fixture, 'cost-payer')
    await fixture.chain.mint(fixture.admin, fixture.usdt, payer.address, 100_000_000n)
    await fixture.chain.payJetton(payer, fixture.usdt, shop, 10_000_000n, { forwardTonAmount: 0n })
    await fixture.chain.payJetton(payer, fixture.usdt, shop, 11_000_000n, { forwardTonAmount: 0n })
    fixture.toncenter.reset()
    assert.equal((await scanTon()).transfers, 2)
    await fixture.chain.payJetton(payer, fixture.usdt, shop, 12_000_000n, { forwardTonAmount: 0n })
    assert.equal((await scanTon()).transfers, 1)
    assert.equal(fixture.toncenter.calls.filter((method) => method === 'runGetMethod').length, 1)
  })

  test('the API key is sent, and a dead endpoint fails over to the next', async ({
    client,
    assert,
  }) => {
    const rpcUrls = ['http://127.0.0.1:9/jsonRPC', fixture.toncenter.rpcUrl]
    await configureTon(fixture, [], { rpcUrls, apiKey: 'ton-key-1' })
    fixture.toncenter.requiredApiKey = 'ton-key-1'
    const order = await createTonOrder(client)
    await scanTon()
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_800_000n)
    await scanTon()
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.isAbove(fixture.toncenter.apiKeysSeen.length, 0)
    assert.isTrue(fixture.toncenter.apiKeysSeen.every((key) => key === 'ton-key-1'))
  })

  test('payment URIs: jetton form for USDT, nanotons for TON', async ({ client, assert }) => {
    const usdtOrder = await createTonOrder(client)
    const tonOrder = await createTonOrder(client, { token: 'ton' })
    const usdt = await client.get(`/pay/payment-uri/${usdtOrder.tradeId}`)
    assert.equal(
      usdt.body().data.uri,
      `ton://transfer/${storedWallet(shop)}?jetton=${fixture.usdt.toString()}&amount=13800000`
    )
    const ton = await client.get(`/pay/payment-uri/${tonOrder.tradeId}`)
    assert.equal(ton.body().data.uri, `ton://transfer/${storedWallet(shop)}?amount=5000000000`)
  })
})

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

test.group('TON: submit-tx-hash and mark-paid', (group) => {
  let fixture: TonFixture
  let shop: Address

  group.setup(async () => {
    fixture = await startTonFixture()
    return () => fixture.toncenter.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    shop = (await freshShop(fixture)).address
    await configureTon(fixture, [shop])
  })

  test('the canonical reference pays the order', async ({ client, assert }) => {
    const order = await createTonOrder(client)
    const { transaction } = await fixture.chain.payJetton(
      fixture.payer,
      fixture.usdt,
      shop,
      13_800_000n
    )
    const reference = tonReference(transaction!, shop)
    const response = await submit(client, order.tradeId, reference)
    response.assertStatus(200)
    assert.deepEqual(response.body().data, {
      trade_id: order.tradeId,
      block_transaction_id: reference,
      status: 2,
    })
  })

  test('<lt>:<hash> of the order address pays it, stored in canonical form', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client, { token: 'ton' })
    const { transaction } = await fixture.chain.payTon(fixture.payer, shop, toNano('5'))
    const response = await submit(
      client,
      order.tradeId,
      `${transaction.lt}:${transaction.hash().toString('hex')}`
    )
    response.assertStatus(200)
    assert.equal(response.body().data.block_transaction_id, tonReference(transaction, shop))
  })

  test('a bare hash (transaction or incoming message) is found among recent transactions', async ({
    client,
    assert,
  }) => {
    const first = await createTonOrder(client)
    const second = await createTonOrder(client, { token: 'ton' })
    const jetton = await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_800_000n)
    const native = await fixture.chain.payTon(fixture.payer, shop, toNano('5'))
    await fixture.chain.payTon(fixture.payer, shop, toNano('0.2')) // newer traffic

    const byHash = await submit(
      client,
      first.tradeId,
      jetton.transaction!.hash().toString('hex').toUpperCase()
    )
    byHash.assertStatus(200)
    assert.equal(byHash.body().data.block_transaction_id, tonReference(jetton.transaction!, shop))

    const messageCell = native.transaction.raw.refs[0].beginParse()
    messageCell.loadBit()
    const messageHash = messageCell.loadRef().hash().toString('hex')
    const byMessage = await submit(client, second.tradeId, messageHash)
    byMessage.assertStatus(200)
    assert.equal(byMessage.body().data.block_transaction_id, tonReference(native.transaction, shop))
  })

  test('orders:mark-paid accepts the TON reference forms', async ({ client, assert }) => {
    const order = await createTonOrder(client)
    const { transaction } = await fixture.chain.payJetton(
      fixture.payer,
      fixture.usdt,
      shop,
      13_800_000n
    )
    const reference = `${transaction!.lt}:${transaction!.hash().toString('hex')}`
    const result = await runAce(['orders:mark-paid', order.tradeId, reference])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, tonReference(transaction!, shop))
  }).timeout(60_000)

  test('refuses a reference that is not found', async ({ client, assert }) => {
    const order = await createTonOrder(client)
    const { transaction } = await fixture.chain.payJetton(
      fixture.payer,
      fixture.usdt,
      shop,
      13_800_000n
    )
    const wrongHash = 'ab'.repeat(32)
    for (const reference of [
      `${transaction!.lt}:${wrongHash}`,
      wrongHash,
      `ton:${shop.toRawString()}:1:${wrongHash}`,
    ]) {
      const response = await submit(client, order.tradeId, reference)
      response.assertStatus(400)
      assert.match(response.body().message, /not found/)
    }
    const malformed = await submit(client, order.tradeId, 'ton:nonsense:12')
    assert.match(malformed.body().message, /not a TON transaction reference/)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('refuses a failed transaction and a bounced one', async ({ client, assert }) => {
    await db.from('wallets').delete()
    const rejecting = await fixture.chain.deployRejectingReceiver(fixture.payer)
    await configureTon(fixture, [rejecting])
    const failedOrder = await createTonOrder(client, { token: 'ton' })
    const failed = await fixture.chain.payTon(fixture.payer, rejecting, toNano('5'), {
      body: comment('x'),
    })
    const response = await submit(
      client,
      failedOrder.tradeId,
      tonReference(failed.transaction, rejecting)
    )
    assert.match(response.body().message, /failed on chain/)

    await db.from('wallets').delete()
    const fresh = fixture.chain.undeployedAddress()
    await configureTon(fixture, [fresh])
    const bouncedOrder = await createTonOrder(client, { token: 'ton' })
    const bounced = await fixture.chain.payTon(
      fixture.payer,
      fresh,
      toNano(bouncedOrder.actualAmount),
      { bounce: true }
    )
    const refused = await submit(
      client,
      bouncedOrder.tradeId,
      tonReference(bounced.transaction, fresh)
    )
    assert.match(refused.body().message, /failed on chain/)
    assert.equal(await countRows('orders', { status: 2 }), 0)
  })

  test('refuses a transfer to another address', async ({ client, assert }) => {
    const order = await createTonOrder(client)
    const other = await freshShop(fixture)
    const { transaction } = await fixture.chain.payJetton(
      fixture.payer,
      fixture.usdt,
      other.address,
      13_800_000n
    )
    const response = await submit(client, order.tradeId, tonReference(transaction!, other.address))
    assert.match(
      response.body().message,
      new RegExp(`pays ${storedWallet(other.address)}, not ${order.receiveAddress}`)
    )
  })

  test('refuses another token: TON or a fake USDT sent to a USDT order', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client)
    const native = await fixture.chain.payTon(fixture.payer, shop, toNano('13.8'))
    const response = await submit(client, order.tradeId, tonReference(native.transaction, shop))
    assert.match(response.body().message, /does not transfer USDT/)

    const fake = await fixture.chain.payJetton(fixture.payer, fixture.fakeUsdt, shop, 13_800_000n, {
      forwardTonAmount: 1n,
    })
    const refused = await submit(client, order.tradeId, tonReference(fake.transaction!, shop))
    assert.match(refused.body().message, /does not transfer USDT|transfers nothing/)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('refuses a wrong amount', async ({ client, assert }) => {
    const order = await createTonOrder(client)
    const { transaction } = await fixture.chain.payJetton(
      fixture.payer,
      fixture.usdt,
      shop,
      13_790_000n
    )
    const response = await submit(client, order.tradeId, tonReference(transaction!, shop))
    assert.match(response.body().message, /transfers 13.79 USDT, the order expects 13.8/)
  })

  test('amounts are exact in base units', async ({ client, assert }) => {
    const order = await createTonOrder(client, { token: 'ton', amount: 100.02 })
    assert.equal(order.actualAmount, '5.001')
    const { transaction } = await fixture.chain.payTon(
      fixture.payer,
      shop,
      baseUnits(order.actualAmount, 9) - 1n
    )
    const response = await submit(client, order.tradeId, tonReference(transaction, shop))
    assert.match(response.body().message, /transfers 5.000999999 TON/)
  })
})
