import { test } from '@japa/runner'
import { Address, beginCell, toNano } from '@ton/core'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import Token from '#models/token'
import { rpcFor } from '#chains/chain_rpc'
import type { ScanResult, SeenAmount } from '#chains/chain_family'
import { TonFamily } from '#plugins/ton/ton_family'
import {
  BALANCE_GRACE_RUNS,
  placeHeights,
  settleReading,
  type AccountBalanceRun,
} from '#plugins/ton/ton_balances'
import { fromBaseUnits } from '#support/text/money'
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

/**
 * The balance watch on TON: each watched wallet's TON and its jetton
 * wallets' balances read as of their last transactions, every incoming
 * amount seen on the same accounts, and the core's unexplained incoming
 * amounts when a transaction never shows in the listing.
 */

/** One scan by the family itself with the core's context; `readBalances` as the core would set it. */
async function familyScan(
  wallet: Address,
  cursor: unknown,
  readBalances: boolean
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
    readBalances,
  })
}

/** The params of the calls of `method` the fake served since request `from`. */
function callsOf(fixture: TonFixture, method: string, from: number) {
  return fixture.toncenter.requests
    .slice(from)
    .map((request) => JSON.parse(request.body || '{}'))
    .filter((call) => call.method === method)
    .map((call) => call.params)
}

async function usdtContract() {
  return (await Token.query().where('network', 'ton').where('symbol', 'USDT').firstOrFail())
    .contract!
}

/** TON on `account` in token units, and its last transaction lt, as the sandbox holds them. */
async function tonState(fixture: TonFixture, account: Address) {
  const contract = await fixture.chain.blockchain.getContract(account)
  return { amount: fromBaseUnits(contract.balance, 9), lt: contract.lastTransactionLt }
}

function readingOf(result: ScanResult, contract: string | null) {
  return result.balances?.readings.find((reading) => reading.contract === contract)
}

function seenOf(result: ScanResult, reference: string): SeenAmount | undefined {
  return result.seen?.find((entry) => entry.reference === reference)
}

async function unexplained() {
  return db.from('unmatched_payments').where('kind', 'unexplained').orderBy('id')
}

/** The balance watch made due, as after `chains.balance_check_minutes`. */
async function makeDue() {
  await db.from('balance_readings').update({ read_at: 0 })
}

test.group('TON balance watch: heights', () => {
  const amount = (reference: string, lt: bigint) => ({
    reference,
    position: 'in',
    to: 'A',
    contract: null,
    amount: '1',
    lt,
  })
  const run = (address: string, overrides: Partial<AccountBalanceRun>): AccountBalanceRun => ({
    address,
    contract: null,
    before: {},
    seen: [],
    ...overrides,
  })

  test('per-account lts onto one height per run: each amount falls in the interval of the reading that holds it', ({
    assert,
  }) => {
    const placed = placeHeights(
      [
        // read at 60; 55 came before it, 70 right after (seen by the same run's walk)
        run('A', {
          before: { reported: { lt: '50', height: '100' } },
          report: { amount: '5', lt: 60n },
          seen: [amount('a55', 55n), amount('a70', 70n)],
        }),
        // read at 200: the run's height
        run('B', {
          before: { reported: { lt: '90', height: '100' } },
          report: { amount: '7', lt: 200n },
        }),
        // not read this run: 85 is after its last reading (at 80, height 100); 75 came before it, late
        run('C', {
          before: { reported: { lt: '80', height: '100' } },
          seen: [amount('c85', 85n), amount('c75', 75n)],
        }),
        // never read: its lt
        run('D', { seen: [amount('d10', 10n)] }),
      ],
      100n
    )
    assert.equal(placed.height, 200n)
    assert.deepEqual(
      Object.fromEntries(placed.seen.map((entry) => [entry.reference, entry.height])),
      { a55: '101', a70: '201', c85: '101', c75: '75', d10: '10' }
    )
    assert.deepEqual(placed.readings, [
      { address: 'A', contract: null, amount: '5' },
      { address: 'B', contract: null, amount: '7' },
    ])
    // nothing read: no height; an idle run after a reading still moves past it
    assert.isNull(placeHeights([run('A', {})], 100n).height)
    assert.equal(placeHeights([run('A', { report: { amount: '5', lt: 60n } })], 100n).height, 101n)
  })

  test('what becomes of a reading after its walk', ({ assert }) => {
    const fresh = { amount: '5', lt: 60n }
    const base = { fresh, held: undefined, doneBefore: 50n, doneAfter: 60n, finished: true }
    assert.deepEqual(settleReading(base), { report: fresh })
    assert.deepEqual(
      settleReading({ ...base, doneAfter: 70n }),
      { report: fresh },
      'the walk went past it'
    )
    assert.deepEqual(
      settleReading({ ...base, doneBefore: 65n, doneAfter: 70n }),
      {},
      'a stale state'
    )
    assert.deepEqual(settleReading({ ...base, finished: false }), {}, 'an unfinished walk')
    assert.deepEqual(settleReading({ ...base, doneAfter: 50n }), {
      held: { amount: '5', lt: '60', runs: 0 },
    })
    const held = { amount: '5', lt: '60', runs: 0 }
    assert.deepEqual(settleReading({ ...base, fresh: null, held, doneAfter: 50n }), {
      held: { ...held, runs: 1 },
    })
    assert.deepEqual(
      settleReading({ ...base, fresh: null, held: { ...held, runs: 1 }, doneAfter: 50n }),
      { report: fresh }
    )
    assert.deepEqual(settleReading({ ...base, fresh: null, held, doneAfter: 60n }), {
      report: fresh,
    })
    assert.deepEqual(settleReading({ ...base, fresh: null, held, finished: false }), {})
  })
})

test.group('TON balance watch: readings and amounts seen, in the family', (group) => {
  let fixture: TonFixture
  let shop: Address

  group.setup(async () => {
    fixture = await startTonFixture()
    return () => fixture.toncenter.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    shop = (await freshTreasury(fixture, 'shop')).address
    await configureTon(fixture, [shop])
  })

  test("a due scan reads TON and each jetton once, as of each account's last transaction; every incoming amount is seen below the run's height", async ({
    assert,
  }) => {
    const payer = await freshPayer(fixture)
    const first = await familyScan(shop, null, false)
    assert.isUndefined(first.balances, 'not due: nothing read')
    assert.lengthOf(first.seen ?? [], 0)

    const ton = await fixture.chain.payTon(payer, shop, toNano('2'))
    const notified = await fixture.chain.payJetton(payer, fixture.usdt, shop, 5_000_000n)
    const silent = await fixture.chain.payJetton(payer, fixture.usdt, shop, 7_000_000n, {
      forwardTonAmount: 0n,
    })

    const from = fixture.toncenter.requests.length
    const result = await familyScan(shop, first.cursor, true)
    // one read per balance: getAddressInformation of the wallet, get_wallet_data of its jetton wallet
    const information = callsOf(fixture, 'getAddressInformation', from)
    assert.lengthOf(information, 1)
    assert.isTrue(Address.parse(information[0].address).equals(shop))
    // (and the payer's jetton wallet, to check the sender of the transfer without notification)
    const methods = callsOf(fixture, 'runGetMethod', from).map((params) => params.method)
    assert.deepEqual(methods.sort(), ['get_wallet_address', 'get_wallet_data'])

    const usdt = await usdtContract()
    const wallet = await tonState(fixture, shop)
    const jettonWallet = notified.jettonWallet
    const jettonLt = (await fixture.chain.blockchain.getContract(jettonWallet)).lastTransactionLt
    assert.deepEqual(readingOf(result, null), {
      address: storedWallet(shop),
      contract: null,
      amount: wallet.amount,
    })
    assert.deepEqual(readingOf(result, usdt), {
      address: storedWallet(shop),
      contract: usdt,
      amount: '12',
    })
    // the first run that reports: its height is the newest of the lts read
    const height = wallet.lt > jettonLt ? wallet.lt : jettonLt
    assert.equal(result.balances!.height, height.toString())

    // TON: the payment and the TON the notification forwarded, on the wallet at their lts
    assert.deepEqual(seenOf(result, tonReference(ton.transaction, shop)), {
      reference: tonReference(ton.transaction, shop),
      position: 'in',
      to: storedWallet(shop),
      contract: null,
      amount: '2',
      height: ton.transaction.lt.toString(),
    })
    assert.equal(seenOf(result, tonReference(notified.transaction!, shop))?.amount, '0.01')
    assert.isNull(seenOf(result, tonReference(notified.transaction!, shop))?.contract)
    // jettons: both credits, measured on the jetton wallet's internal_transfer transactions
    for (const [payment, amount] of [
      [notified, '5'],
      [silent, '7'],
    ] as const) {
      const reference = tonReference(payment.jettonTransaction, jettonWallet)
      assert.deepEqual(seenOf(result, reference), {
        reference,
        position: 'in',
        to: storedWallet(shop),
        contract: usdt,
        amount,
        height: payment.jettonTransaction.lt.toString(),
      })
    }
    assert.lengthOf(result.seen!, 4)
    assert.isTrue(result.seen!.every((entry) => BigInt(entry.height) <= height))

    // not due: no read; due again: read again, above the last height
    const quiet = await familyScan(shop, result.cursor, false)
    assert.isUndefined(quiet.balances)
    const again = await familyScan(shop, quiet.cursor, true)
    assert.isAbove(Number(BigInt(again.balances!.height) - height), 0)
    assert.deepEqual(readingOf(again, null)?.amount, wallet.amount)
  })

  test("an account never deployed reads 0: toncenter's `balance: 0` and get_wallet_data's exit code -13", async ({
    assert,
  }) => {
    const fresh = fixture.chain.undeployedAddress()
    await db.from('wallets').delete()
    await configureTon(fixture, [fresh])
    const usdt = await usdtContract()
    const result = await familyScan(fresh, null, true)
    assert.deepEqual(readingOf(result, null)?.amount, '0')
    assert.deepEqual(readingOf(result, usdt)?.amount, '0')

    // TON sent non-bounceable stays on the undeployed account; its jetton wallet is deployed by the transfer
    const native = await fixture.chain.payTon(fixture.payer, fresh, toNano('1.5'), {
      bounce: false,
    })
    await fixture.chain.payJetton(fixture.payer, fixture.usdt, fresh, 3_000_000n, {
      forwardTonAmount: 0n,
    })
    const next = await familyScan(fresh, result.cursor, true)
    const state = await tonState(fixture, fresh)
    assert.equal(readingOf(next, null)?.amount, state.amount)
    assert.isAbove(Number(state.amount), 1.49)
    assert.equal(readingOf(next, usdt)?.amount, '3')
    assert.equal(seenOf(next, tonReference(native.transaction, fresh))?.amount, '1.5')
  })

  test('the wallet pays its own fees and its own transfers: seen are the incoming amounts only, bounces included', async ({
    assert,
  }) => {
    const payer = await freshPayer(fixture)
    const shopTreasury = await fixture.chain.treasury(`shop-out-${process.pid}`)
    await db.from('wallets').delete()
    await configureTon(fixture, [shopTreasury.address])
    const own = shopTreasury.address
    const { cursor } = await familyScan(own, null, false)
    const received = await fixture.chain.payTon(payer, own, toNano('3'))
    const sent = await fixture.chain.payTon(shopTreasury, payer.address, toNano('1'))
    const rejecting = await fixture.chain.deployRejectingReceiver(payer)
    const bounced = await fixture.chain.payTon(shopTreasury, rejecting, toNano('0.5'), {
      bounce: true,
      body: beginCell().storeUint(1, 32).endCell(),
    })
    const result = await familyScan(own, cursor, true)
    const amounts = result.seen!.map((entry) => [entry.reference, entry.amount])
    assert.deepInclude(amounts, [tonReference(received.transaction, own), '3'])
    // the wallet's own sends (external messages) bring nothing in
    const outgoing = [...sent.result.transactions, ...bounced.result.transactions].filter(
      (transaction) => transaction.inMessage?.info.type === 'external-in'
    )
    assert.isAtLeast(outgoing.length, 2)
    for (const transaction of outgoing)
      assert.isUndefined(seenOf(result, tonReference(transaction, own)))
    // the bounce of our own 0.5 TON came back to us: incoming value, seen
    const back = bounced.result.transactions.find(
      (transaction) =>
        transaction.inMessage?.info.type === 'internal' && transaction.inMessage.info.bounced
    )!
    assert.equal(
      seenOf(result, tonReference(back, own))?.amount,
      fromBaseUnits((back.inMessage!.info as any).value.coins, 9)
    )
  })

  test("a transaction after the read but before the walk is seen above the run's height; a stale state is not reported", async ({
    assert,
  }) => {
    const baseline = await familyScan(shop, null, true)
    const before = await tonState(fixture, shop)
    assert.equal(readingOf(baseline, null)?.amount, before.amount)

    // the state read answers as of before the payment (a backend a block behind); the listing has it
    await fixture.toncenter.holdState(shop)
    const late = await fixture.chain.payTon(fixture.payer, shop, toNano('4'))
    const run = await familyScan(shop, baseline.cursor, true)
    assert.equal(readingOf(run, null)?.amount, before.amount, 'as of its own last transaction')
    const seen = seenOf(run, tonReference(late.transaction, shop))!
    assert.isAbove(
      Number(BigInt(seen.height) - BigInt(run.balances!.height)),
      0,
      'after the reading that does not hold it'
    )

    // read again while the state still lags behind what the listing already showed: dropped
    const stale = await familyScan(shop, run.cursor, true)
    assert.isUndefined(readingOf(stale, null))
    fixture.toncenter.releaseState(shop)
    const fresh = await familyScan(shop, stale.cursor, true)
    const now = await tonState(fixture, shop)
    assert.equal(readingOf(fresh, null)?.amount, now.amount)
  })

  test('a reading the listing has not reached is held back: reported once the listing shows it, or after two more runs', async ({
    assert,
  }) => {
    assert.equal(BALANCE_GRACE_RUNS, 2)
    const baseline = await familyScan(shop, null, true)

    // the listing lags behind the state: held, then reported when the transaction shows
    const lagging = await fixture.chain.payTon(fixture.payer, shop, toNano('1'))
    fixture.toncenter.hidden.add(lagging.transaction.hash().toString('hex'))
    const held = await familyScan(shop, baseline.cursor, true)
    assert.isUndefined(readingOf(held, null), 'not reported while the listing is behind')
    assert.isDefined(
      readingOf(held, await usdtContract()),
      'the jetton wallet had nothing new: reported'
    )
    const from = fixture.toncenter.requests.length
    fixture.toncenter.hidden.clear()
    const shown = await familyScan(shop, held.cursor, true)
    assert.lengthOf(
      callsOf(fixture, 'getAddressInformation', from),
      0,
      'a held reading is not read again'
    )
    assert.equal(readingOf(shown, null)?.amount, (await tonState(fixture, shop)).amount)
    const seen = seenOf(shown, tonReference(lagging.transaction, shop))!
    assert.isAtMost(
      Number(BigInt(seen.height) - BigInt(shown.balances!.height)),
      0,
      'held by the reading'
    )

    // a transaction the listing never shows: the reading is reported after two more finished runs
    const hidden = await fixture.chain.payTon(fixture.payer, shop, toNano('2'))
    fixture.toncenter.hidden.add(hidden.transaction.hash().toString('hex'))
    let cursor = shown.cursor
    const results: ScanResult[] = []
    for (let run = 0; run <= BALANCE_GRACE_RUNS; run++) {
      const result = await familyScan(shop, cursor, run === 0)
      results.push(result)
      cursor = result.cursor
    }
    assert.deepEqual(
      results.map((result) => readingOf(result, null)?.amount ?? null),
      [null, null, (await tonState(fixture, shop)).amount]
    )
    assert.isUndefined(
      results.flatMap((result) => result.seen ?? []).find((entry) => entry.amount === '2')
    )
  })
  test('an endpoint that fails or cannot place a balance: the run stops or that reading is left out, never a wrong one', async ({
    assert,
  }) => {
    const usdt = await usdtContract()
    const baseline = await familyScan(shop, null, false)

    // the walk after the read fails: the reading is dropped with the run's progress kept
    fixture.toncenter.failing.set('getTransactions', 502)
    const broken = await familyScan(shop, baseline.cursor, true)
    assert.match(broken.interrupted ?? '', /HTTP 502/)
    assert.isUndefined(broken.balances)
    fixture.toncenter.failing.clear()

    // the state read itself fails: the run stops there
    fixture.toncenter.failing.set('getAddressInformation', 500)
    const unread = await familyScan(shop, broken.cursor, true)
    assert.match(unread.interrupted ?? '', /HTTP 500/)
    assert.isUndefined(unread.balances)
    fixture.toncenter.failing.clear()

    // runGetMethod without the state's last transaction (older toncenter): the jetton is left out, TON is read
    fixture.toncenter.bareRunResults = true
    const bare = await familyScan(shop, unread.cursor, true)
    assert.isUndefined(bare.interrupted)
    assert.isUndefined(readingOf(bare, usdt))
    assert.equal(readingOf(bare, null)?.amount, (await tonState(fixture, shop)).amount)
    fixture.toncenter.bareRunResults = false
    assert.equal(readingOf(await familyScan(shop, bare.cursor, true), usdt)?.amount, '0')
  })
})

test.group('TON balance watch: unexplained incoming amounts, through the scanner', (group) => {
  let fixture: TonFixture
  let shop: Address

  group.setup(async () => {
    fixture = await startTonFixture()
    return () => fixture.toncenter.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    shop = (await freshTreasury(fixture, 'shop')).address
    await configureTon(fixture, [shop])
  })

  test('TON sent by a transaction the listing hides is unexplained after two readings; the payment beside it is not', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client, { token: 'ton' })
    const baseline = await scanTonNetwork()
    assert.equal(baseline.detail.startsWith('scan failed'), false, baseline.detail)
    assert.lengthOf(
      await db.from('balance_readings').where('network', 'ton'),
      2,
      'TON and USDT read'
    )

    const hidden = await fixture.chain.payTon(fixture.payer, shop, toNano('3'))
    fixture.toncenter.hidden.add(hidden.transaction.hash().toString('hex'))
    await fixture.chain.payTon(fixture.payer, shop, toNano(order.actualAmount))
    await makeDue()
    const report = await scanTonNetwork()
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).status, 2)

    const rows = await unexplained()
    assert.lengthOf(rows, 1)
    const [row] = rows
    assert.equal(row.token, 'TON')
    assert.equal(row.to_address, storedWallet(shop))
    // 3 TON came in unseen; the wallet paid its fees for both transactions out of its balance
    assert.isAtMost(Number(row.amount), 3)
    assert.isAbove(Number(row.amount), 2.99)
    assert.match(row.reason, /unexplained incoming amount: the balance rose by .* TON .*explain 5/)
  }).timeout(60_000)

  test("a hidden transaction that is the wallet's last: unexplained once the reading has waited for the listing", async ({
    assert,
  }) => {
    await scanTonNetwork()
    const hidden = await fixture.chain.payTon(fixture.payer, shop, toNano('0.7'))
    fixture.toncenter.hidden.add(hidden.transaction.hash().toString('hex'))
    await makeDue()
    await scanTonNetwork()
    assert.lengthOf(await unexplained(), 0, 'held back: the listing may only lag')
    for (let run = 0; run < BALANCE_GRACE_RUNS && (await unexplained()).length === 0; run++)
      await scanTonNetwork()
    const [row] = await unexplained()
    assert.equal(row?.token, 'TON')
    assert.isAbove(Number(row.amount), 0.69)
    assert.isAtMost(Number(row.amount), 0.7)
  }).timeout(60_000)

  test('jettons credited by a jetton wallet transaction the listing hides are unexplained, to the unit', async ({
    client,
    assert,
  }) => {
    const order = await createTonOrder(client)
    await scanTonNetwork()
    const payer = await freshPayer(fixture)
    const hidden = await fixture.chain.payJetton(payer, fixture.usdt, shop, 4_200_000n, {
      forwardTonAmount: 0n,
    })
    fixture.toncenter.hidden.add(hidden.jettonTransaction.hash().toString('hex'))
    await fixture.chain.payJetton(payer, fixture.usdt, shop, 13_800_000n, { forwardTonAmount: 0n })
    await makeDue()
    await scanTonNetwork()
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    const rows = await unexplained()
    assert.deepEqual(
      rows.map((row: { token: string; amount: string }) => [row.token, row.amount]),
      [['USDT', '4.2']]
    )
  }).timeout(60_000)

  test('a listing a run behind the state raises no alarm', async ({ client, assert }) => {
    const order = await createTonOrder(client, { token: 'ton' })
    await scanTonNetwork()
    const payment = await fixture.chain.payTon(fixture.payer, shop, toNano(order.actualAmount))
    fixture.toncenter.hidden.add(payment.transaction.hash().toString('hex'))
    await makeDue()
    await scanTonNetwork()
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    fixture.toncenter.hidden.clear()
    await scanTonNetwork()
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.lengthOf(await unexplained(), 0)
    const reading = await db
      .from('balance_readings')
      .where({ network: 'ton', contract: '' })
      .firstOrFail()
    assert.equal(reading.amount, (await tonState(fixture, shop)).amount, 'read as of the payment')
  }).timeout(60_000)

  test('every kind of incoming value is explained: payments, forwarded TON, jettons with and without notification, dust, forgeries', async ({
    client,
    assert,
  }) => {
    const tonOrder = await createTonOrder(client, { token: 'ton' })
    const usdtOrder = await createTonOrder(client)
    await scanTonNetwork()
    const payer = await freshPayer(fixture)
    await fixture.chain.payTon(payer, shop, toNano(tonOrder.actualAmount))
    await fixture.chain.payJetton(payer, fixture.usdt, shop, 13_800_000n) // notified: pays, forwards 0.01 TON
    await fixture.chain.payJetton(payer, fixture.usdt, shop, 2_000_000n, { forwardTonAmount: 0n }) // unmatched
    await fixture.chain.payTon(payer, shop, toNano('0.001')) // dust
    await fixture.chain.payJetton(payer, fixture.fakeUsdt, shop, 5_000_000n) // another jetton: its TON only
    await fixture.chain.forgeNotification(payer, shop, 9_000_000n) // a forged notification: its TON only
    await fixture.chain.payTon(payer, shop, toNano('0.2'), { bounce: true }) // unmatched TON
    await makeDue()
    const report = await scanTonNetwork()
    assert.equal(report.paid, 2, report.detail)
    assert.equal((await Order.findOrFail(usdtOrder.id)).status, 2)
    assert.lengthOf(await unexplained(), 0)

    // and once more, after more of the same
    await fixture.chain.payJetton(payer, fixture.usdt, shop, 1_000_000n)
    await fixture.chain.payTon(payer, shop, toNano('0.3'))
    await makeDue()
    await scanTonNetwork()
    assert.lengthOf(await unexplained(), 0)
    const readings = await db.from('balance_readings').where('network', 'ton').orderBy('contract')
    assert.deepEqual(
      readings.map((reading: { contract: string; amount: string }) => [
        reading.contract,
        reading.amount,
      ]),
      [
        ['', (await tonState(fixture, shop)).amount],
        [await usdtContract(), '16.8'],
      ]
    )
  }).timeout(60_000)
})
