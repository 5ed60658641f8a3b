import { test } from '@japa/runner'
import { type Address, beginCell, toNano } from '@ton/core'
import Order from '#models/order'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { merchantVerifiesCallback } from '#tests/helpers/merchant'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { runAce } from '#tests/helpers/processes'
import { tonReference } from '#tests/helpers/ton/ton_test_chain'
import {
  configureTon,
  startTonFixture,
  storedWallet,
  type TonFixture,
} from '#tests/helpers/ton/ton_setup'
import {
  createTonOrder,
  freshPayer,
  freshTreasury,
  scanTonNetwork,
} from '#tests/helpers/ton/ton_orders'
import db from '@adonisjs/lucid/services/db'
import Token from '#models/token'
import { readJettonWalletTransaction } from '#plugins/ton/ton_jetton_wallet'

const OP_INTERNAL_TRANSFER = 0x178d4519

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

/** An internal_transfer body as a forger writes it: a plain wallet cannot make a jetton wallet credit it. */
function forgedInternalTransfer(units: bigint, from: Address) {
  return beginCell()
    .storeUint(OP_INTERNAL_TRANSFER, 32)
    .storeUint(1, 64)
    .storeCoins(units)
    .storeAddress(from)
    .storeAddress(from)
    .storeCoins(0)
    .storeBit(false)
    .endCell()
}

test.group('TON: jetton transfers without notification (forward_ton_amount = 0)', (group) => {
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
    shop = (await freshTreasury(fixture, 'shop')).address
    await configureTon(fixture, [shop])
    merchant.reset()
  })

  test('seen on the jetton wallet: paid once, referenced by the jetton wallet transaction, signed callback', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client, { notify_url: merchant.notifyUrl })
    await scanTonNetwork()
    const payer = await freshPayer(fixture)
    const payment = await fixture.chain.payJetton(payer, fixture.usdt, shop, 13_800_000n, {
      forwardTonAmount: 0n,
    })
    assert.isUndefined(payment.transaction, 'the owner wallet got no transfer_notification')
    assert.equal(await fixture.chain.jettonBalance(fixture.usdt, shop), 13_800_000n)

    const report = await scanTonNetwork()
    assert.equal(report.paid, 1, report.detail)
    const reference = tonReference(payment.jettonTransaction, payment.jettonWallet)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, reference)

    await callbackDeliverer.runOnce()
    const body = JSON.parse(merchant.requests[0].body)
    assert.equal(body.block_transaction_id, reference)
    assert.isTrue(merchantVerifiesCallback(body))

    // scanned again from the start: never a second payment
    const second = await createTonOrder(client)
    assert.equal(second.actualAmount, order.actualAmount)
    await db.from('chain_cursors').update({ cursor: '' })
    await scanTonNetwork()
    assert.equal((await Order.findOrFail(second.id)).status, 1)
    assert.equal(await countRows('callbacks'), 1)
  })

  test('a notified transfer is seen on both accounts yet counted once, under the notification reference', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client)
    await scanTonNetwork()
    const payment = await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_800_000n)
    assert.isDefined(payment.transaction)
    assert.isDefined(payment.jettonTransaction)

    const report = await scanTonNetwork()
    assert.equal(report.transfers, 1, report.detail)
    assert.equal(report.paid, 1)
    assert.equal(
      (await Order.findOrFail(order.id)).blockTransactionId,
      tonReference(payment.transaction!, shop)
    )
    // had the jetton wallet's transaction counted too, it would be an unmatched payment (order already paid)
    assert.equal(await countRows('unmatched_payments'), 0)

    await db.from('chain_cursors').update({ cursor: '' })
    const again = await scanTonNetwork()
    assert.equal(again.paid, 0)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('a forged internal_transfer to the jetton wallet is not credited', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client)
    await scanTonNetwork()
    const jettonWallet = await fixture.chain.jettonWalletOf(fixture.usdt, shop)
    // undeployed jetton wallet: the message bounces; deployed: the wallet refuses the sender
    await fixture.chain.payTon(fixture.payer, jettonWallet, toNano('0.1'), {
      bounce: true,
      body: forgedInternalTransfer(13_800_000n, fixture.payer.address),
    })
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_790_000n, {
      forwardTonAmount: 0n,
    })
    const forged = await fixture.chain.payTon(fixture.payer, jettonWallet, toNano('0.1'), {
      bounce: true,
      body: forgedInternalTransfer(13_800_000n, fixture.payer.address),
    })
    const description = forged.transaction.description
    assert.isTrue(
      description.type === 'generic' &&
        description.computePhase.type === 'vm' &&
        !description.computePhase.success
    )

    await scanTonNetwork()
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    const unmatched = await db.from('unmatched_payments').select('amount')
    assert.deepEqual(
      unmatched.map((row) => String(row.amount)),
      ['13.79']
    )
  })

  test('submit-tx-hash takes the jetton wallet transaction: canonical, <lt>:<hash> and bare hash', async ({
    client,
    assert,
  }) => {
    const payer = await freshPayer(fixture)
    const first = await createTonOrder(client)
    const second = await createTonOrder(client, { amount: 101 })
    const third = await createTonOrder(client, { amount: 102 })
    const pay = (units: bigint) =>
      fixture.chain.payJetton(payer, fixture.usdt, shop, units, { forwardTonAmount: 0n })
    const one = await pay(13_800_000n)
    const two = await pay(BigInt(Number(second.actualAmount) * 1e6))
    const three = await pay(BigInt(Number(third.actualAmount) * 1e6))

    const canonical = tonReference(one.jettonTransaction, one.jettonWallet)
    const byCanonical = await submit(client, first.tradeId, canonical)
    byCanonical.assertStatus(200)
    assert.equal(byCanonical.body().data.block_transaction_id, canonical)

    const ltHash = `${two.jettonTransaction.lt}:${two.jettonTransaction.hash().toString('hex')}`
    const byLtHash = await submit(client, second.tradeId, ltHash)
    byLtHash.assertStatus(200)
    assert.equal(
      byLtHash.body().data.block_transaction_id,
      tonReference(two.jettonTransaction, two.jettonWallet)
    )

    const byHash = await submit(
      client,
      third.tradeId,
      three.jettonTransaction.hash().toString('hex')
    )
    byHash.assertStatus(200)
    assert.equal(
      byHash.body().data.block_transaction_id,
      tonReference(three.jettonTransaction, three.jettonWallet)
    )

    // the scanner then finds them all already paid: nothing twice, nothing unmatched
    const report = await scanTonNetwork()
    assert.equal(report.paid, 0)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('the jetton wallet transaction of a notified transfer resolves to the notification reference', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client)
    const payment = await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_800_000n)
    const response = await submit(
      client,
      order.tradeId,
      tonReference(payment.jettonTransaction, payment.jettonWallet)
    )
    response.assertStatus(200)
    const notification = tonReference(payment.transaction!, shop)
    assert.equal(response.body().data.block_transaction_id, notification)

    // the same transfer, given as the notification, cannot pay another order of the same amount
    const other = await createTonOrder(client)
    assert.equal(other.actualAmount, order.actualAmount)
    const refused = await submit(client, other.tradeId, notification)
    assert.equal(refused.body().status_code, 10007)
    assert.equal((await Order.findOrFail(other.id)).status, 1)
  })

  test('a jetton wallet reference used by the scanner is refused for another order; wrong amounts say so', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client)
    await scanTonNetwork()
    const payer = await freshPayer(fixture)
    const payment = await fixture.chain.payJetton(payer, fixture.usdt, shop, 13_800_000n, {
      forwardTonAmount: 0n,
    })
    await scanTonNetwork()
    assert.equal((await Order.findOrFail(order.id)).status, 2)

    const other = await createTonOrder(client)
    const reference = tonReference(payment.jettonTransaction, payment.jettonWallet)
    const refused = await submit(client, other.tradeId, reference)
    assert.equal(refused.body().status_code, 10007)

    const short = await fixture.chain.payJetton(payer, fixture.usdt, shop, 13_790_000n, {
      forwardTonAmount: 0n,
    })
    const wrong = await submit(
      client,
      other.tradeId,
      tonReference(short.jettonTransaction, short.jettonWallet)
    )
    assert.match(wrong.body().message, /transfers 13.79 USDT, the order expects 13.8/)
  })

  test('orders:mark-paid takes a jetton wallet reference', async ({ client, assert }) => {
    const order = await createTonOrder(client)
    const payer = await freshPayer(fixture)
    const payment = await fixture.chain.payJetton(payer, fixture.usdt, shop, 13_800_000n, {
      forwardTonAmount: 0n,
    })
    const reference = tonReference(payment.jettonTransaction, payment.jettonWallet)
    const result = await runAce(['orders:mark-paid', order.tradeId, reference])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, reference)
  }).timeout(60_000)

  test('the sender must be the master or the jetton wallet the master gives for the `from` owner', async ({
    assert,
  }) => {
    const payer = await freshPayer(fixture)
    const payment = await fixture.chain.payJetton(payer, fixture.usdt, shop, 2_000_000n, {
      forwardTonAmount: 0n,
    })
    const token = await Token.query().where('network', 'ton').where('symbol', 'USDT').firstOrFail()
    const owner = { address: shop, stored: storedWallet(shop) }
    const wallet = { address: payment.jettonWallet, owner, token, master: fixture.usdt }
    const asked: string[] = []
    const read = (walletOf: (master: Address, owner: Address) => Promise<Address>) =>
      readJettonWalletTransaction(payment.jettonTransaction, wallet, {
        tokens: [token],
        confirmations: 1,
        jettonWalletOf: walletOf,
      })

    const real = await read(async (master, from) => {
      asked.push(from.toRawString())
      return fixture.chain.jettonWalletOf(master, from)
    })
    assert.deepEqual(asked, [payer.address.toRawString()])
    assert.deepEqual(
      real.transfers.map((transfer) => [transfer.amount, transfer.to, transfer.success]),
      [['2', storedWallet(shop), true]]
    )

    // a master that names another jetton wallet for the payer: the credit is not ours to trust
    const other = await read(async () => fixture.chain.undeployedAddress())
    assert.lengthOf(other.transfers, 0)
    assert.match(other.unreadable[0].reason, /neither the master nor the jetton wallet of/)

    // a mint comes from the master itself
    const before = fixture.chain.transactionsOf(payment.jettonWallet).length
    await fixture.chain.mint(fixture.admin, fixture.usdt, shop, 3_000_000n)
    const mint = fixture.chain.transactionsOf(payment.jettonWallet)[0]
    assert.equal(fixture.chain.transactionsOf(payment.jettonWallet).length, before + 1)
    const minted = await readJettonWalletTransaction(mint, wallet, {
      tokens: [token],
      confirmations: 1,
      jettonWalletOf: async () => {
        throw new Error('no lookup for a mint')
      },
    })
    assert.deepEqual(
      minted.transfers.map((transfer) => transfer.amount),
      ['3']
    )
  })
})
