import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import { Address, toNano } from '@ton/core'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import Token from '#models/token'
import { rpcFor } from '#chains/chain_rpc'
import { RpcPool } from '#chains/rpc_pool'
import type { ScanContext, ScanResult } from '#chains/chain_family'
import { TonFamily } from '#plugins/ton/ton_family'
import { resetDatabase } from '#tests/helpers/database'
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

/** The methods and addresses of the getTransactions calls the fake served since `from`. */
function getTransactionsParams(fixture: TonFixture, from = 0) {
  return fixture.toncenter.requests
    .slice(from)
    .map((request) => JSON.parse(request.body || '{}'))
    .filter((call) => call.method === 'getTransactions')
    .map((call) => call.params)
}

/** One scan by the family itself, with the core's context (dust rule given by the test). */
async function familyScan(
  wallet: Address,
  cursor: unknown,
  isDust?: ScanContext['isDust']
): Promise<ScanResult> {
  const chain = await Chain.findByOrFail('network', 'ton')
  const tokens = await Token.query().where('network', 'ton').where('enabled', true)
  return new TonFamily().scan({
    chain,
    tokens,
    addresses: [storedWallet(wallet)],
    cursor,
    startTime: Date.now(),
    rpc: await rpcFor(chain),
    maxBlocksPerScan: 100,
    isDust,
  })
}

test.group('TON: rate limits, interrupted runs, dust and unreadable transactions', (group) => {
  let fixture: TonFixture
  let shop: Address

  group.setup(async () => {
    fixture = await startTonFixture()
    return () => fixture.toncenter.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    shop = (await freshTreasury(fixture, 'shop')).address
  })

  test('two wallets without an API key (toncenter: 1 request/s): the first USDT payment is paid in one run', async ({
    client,
    assert,
  }) => {
    const other = (await freshTreasury(fixture, 'shop')).address
    await configureTon(fixture, [shop, other], { apiKey: '' })
    const order = await createTonOrder(client)
    const payer = await freshPayer(fixture)
    const receiver = Address.parse(order.receiveAddress)
    // jetton wallet addresses unknown to the process: the lookups come right after getTransactions
    await fixture.chain.payJetton(payer, fixture.usdt, receiver, 13_800_000n)

    const runs = []
    for (let run = 0; run < 3 && (await Order.findOrFail(order.id)).status !== 2; run++)
      runs.push(await scanTonNetwork())
    assert.equal((await Order.findOrFail(order.id)).status, 2, JSON.stringify(runs))
    assert.isAtMost(runs.length, 2)
    // paced under the limit: every request answered, at most a stray 429 from timer jitter
    assert.isAtMost(fixture.toncenter.limited, 2)
    assert.isTrue(fixture.toncenter.apiKeysSeen.every((key) => key === undefined))
    // 2 wallets × (wallet + jetton wallet) getTransactions, 2 jetton wallet lookups, at 1/s
    const served = fixture.toncenter.servedAt
    assert.isAtLeast(served.at(-1)! - served[0], (served.length - 1) * 1000 - 50)
  }).timeout(60_000)

  test('a run interrupted by a rate limit keeps what it did and the next run resumes where it stopped', async ({
    client,
    assert,
  }) => {
    await configureTon(fixture, [shop])
    const usdtOrder = await createTonOrder(client)
    const tonOrder = await createTonOrder(client, { token: 'ton' })
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 13_800_000n)
    const native = await fixture.chain.payTon(fixture.payer, shop, toNano(tonOrder.actualAmount)) // newer

    // the jetton wallet lookup for the notification keeps answering 429
    fixture.toncenter.failing.set('runGetMethod', 429)
    await scanTonNetwork()
    assert.equal(
      (await Order.findOrFail(tonOrder.id)).status,
      2,
      'the newer TON payment was handled'
    )
    assert.equal((await Order.findOrFail(usdtOrder.id)).status, 1)
    const row = await db.from('chain_cursors').where('network', 'ton').first()
    assert.match(row.last_error, /^interrupted: .*toncenter answered HTTP 429: Ratelimit exceed/)
    const stored = JSON.parse(row.cursor)
    const position = stored.wallets[storedWallet(shop)]
    assert.equal(position.done, null)
    assert.equal(position.walk.next.lt, native.transaction.lt.toString())

    fixture.toncenter.failing.clear()
    const from = fixture.toncenter.requests.length
    await scanTonNetwork()
    assert.equal((await Order.findOrFail(usdtOrder.id)).status, 2)
    const first = getTransactionsParams(fixture, from)[0]
    assert.isTrue(Address.parse(first.address).equals(shop))
    assert.equal(
      first.lt,
      native.transaction.lt.toString(),
      'resumed below the handled transaction, not from the top'
    )
  }).timeout(60_000)

  test('transfers below every watched order are dropped before any further request, and counted', async ({
    assert,
  }) => {
    await configureTon(fixture, [shop])
    let { cursor } = await familyScan(shop, null)
    const dustPayer = await freshPayer(fixture)
    const realPayer = await freshPayer(fixture)
    await fixture.chain.payJetton(dustPayer, fixture.usdt, shop, 500_000n, { forwardTonAmount: 0n })
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, shop, 200_000n)
    await fixture.chain.payTon(fixture.payer, shop, toNano('0.01'))
    await fixture.chain.payJetton(realPayer, fixture.usdt, shop, 2_000_000n, {
      forwardTonAmount: 0n,
    })

    fixture.toncenter.reset()
    const isDust = (_contract: string | null, amount: string) => Number(amount) < 1
    const result = await familyScan(shop, cursor, isDust)
    assert.equal(result.dust, 3)
    assert.deepEqual(
      result.transfers.map((transfer) => transfer.amount),
      ['2']
    )
    // only the real payer's jetton wallet was looked up (the sender check), not the dust sender's
    assert.equal(fixture.toncenter.calls.filter((method) => method === 'runGetMethod').length, 1)
    cursor = result.cursor
    assert.equal((await familyScan(shop, cursor, isDust)).dust, undefined, 'dust is not read twice')
  })

  test('a transaction that cannot be parsed is reported with the reason, never skipped silently', async ({
    assert,
  }) => {
    await configureTon(fixture, [shop])
    const { cursor } = await familyScan(shop, null)
    const broken = await fixture.chain.payTon(fixture.payer, shop, toNano('0.3'))
    const fine = await fixture.chain.payTon(fixture.payer, shop, toNano('0.4'))
    fixture.toncenter.corrupt.add(broken.transaction.hash().toString('hex'))

    const result = await familyScan(shop, cursor)
    assert.lengthOf(result.unreadable ?? [], 1)
    const [unreadable] = result.unreadable!
    assert.equal(unreadable.reference, tonReference(broken.transaction, shop))
    assert.equal(unreadable.to, storedWallet(shop))
    assert.equal(unreadable.timestamp, broken.transaction.now * 1000)
    assert.match(unreadable.reason, /transaction data unreadable/)
    assert.deepEqual(
      result.transfers.map((transfer) => transfer.reference),
      [tonReference(fine.transaction, shop)]
    )
    const next = await familyScan(shop, result.cursor)
    assert.isUndefined(next.unreadable)
    assert.lengthOf(next.transfers, 0)
  })

  test('through the scanner: unreadable kept as unmatched with the reason, dust counted, the order paid', async ({
    client,
    assert,
  }) => {
    await configureTon(fixture, [shop])
    const order = await createTonOrder(client)
    await scanTonNetwork()
    const broken = await fixture.chain.payTon(fixture.payer, shop, toNano('0.3'))
    fixture.toncenter.corrupt.add(broken.transaction.hash().toString('hex'))
    const dustPayer = await freshPayer(fixture)
    await fixture.chain.payJetton(dustPayer, fixture.usdt, shop, 10_000n, { forwardTonAmount: 0n })
    const realPayer = await freshPayer(fixture)
    await fixture.chain.payJetton(realPayer, fixture.usdt, shop, 13_800_000n, {
      forwardTonAmount: 0n,
    })

    fixture.toncenter.reset()
    fixture.toncenter.corrupt.add(broken.transaction.hash().toString('hex'))
    const report = await scanTonNetwork()
    assert.equal(report.paid, 1, report.detail)
    assert.equal(report.dust, 1)
    assert.equal(report.unreadable, 1)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    const row = await db
      .from('unmatched_payments')
      .where('reference', tonReference(broken.transaction, shop))
      .firstOrFail()
    assert.match(row.reason, /unreadable transaction: transaction data unreadable/)
    // the dust sender's jetton wallet was never looked up; the payer's was (its transfer pays)
    assert.equal(fixture.toncenter.calls.filter((method) => method === 'runGetMethod').length, 1)
  })

  test('a token set with a contract that is no jetton master: the run stops saying so, the endpoint is not blamed', async ({
    client,
    assert,
  }) => {
    await configureTon(fixture, [shop])
    const notAMaster = (await freshTreasury(fixture, 'not-a-master')).address
    await chainAdmin.setToken('ton', 'USDT', { contract: notAMaster.toString(), decimals: 6 })
    const tonOrder = await createTonOrder(client, { token: 'ton' })
    await fixture.chain.payTon(fixture.payer, shop, toNano(tonOrder.actualAmount))

    const report = await scanTonNetwork()
    assert.match(
      report.interrupted ?? '',
      /answered get_wallet_address with exit code \d+: is it a jetton master\?/
    )
    assert.equal(
      (await Order.findOrFail(tonOrder.id)).status,
      2,
      'the wallet itself was read first'
    )
    assert.isNull(RpcPool.health(fixture.toncenter.rpcUrl)?.coolUntil || null)
  })
})
