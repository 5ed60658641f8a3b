import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import chainScanner from '#services/chain_scanner'
import { RpcPool } from '#chains/rpc_pool'
import { notePenalty, notPenalised } from '#plugins/tron/tron_endpoints'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { CLOSED_URL, runAce } from '#tests/helpers/processes'
import { FakeTronGrid } from '#tests/helpers/tron/fake_trongrid'
import {
  USDT_CONTRACT,
  baseUnits,
  newTronOrder,
  prepareTronNetwork,
  type TronTestNetwork,
} from '#tests/helpers/tron/tron_network'
import { persistedCursor, scanOnce } from '#tests/helpers/scanning'

/**
 * The TRON scanner against what TronGrid really does: an index that shows
 * rows late, rate limits that stop a run midway, pages that end early,
 * rows it cannot read, and a backup node without the v1 index.
 */
const scanTron = () => scanOnce('tron')

const savedCursor = () => persistedCursor('tron')

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

/** Transaction ids whose receipts were asked for, in order. */
function receiptLookups(fake: FakeTronGrid) {
  return fake
    .requestsTo('gettransactioninfobyid')
    .map((request) => JSON.parse(request.body).value as string)
}

test.group('TRON providers: a lagging index', (group) => {
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

  test('a transfer the index shows 15 minutes after its block is paid (default look-back)', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    await scanTron()
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
      indexDelayMs: 15 * 60_000,
    })
    // 3-second blocks, a scan every minute of chain time.
    for (let minutes = 1; minutes < 15; minutes++) {
      fake.mine(20, 3000)
      assert.equal((await scanTron()).transfers, 0, `not listed yet at ${minutes} minutes`)
    }
    fake.mine(20, 3000)
    const report = await scanTron()
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
  })

  test('a transfer indexed 2 hours late is paid by the hourly deep re-scan, which reads no receipt twice', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    const early = await newTronOrder(client)
    await scanTron()
    const onTime = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(early.actualAmount),
    })
    const late = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
      indexDelayMs: 2 * 3600_000,
    })
    fake.mine(19)
    assert.equal((await scanTron()).paid, 1, 'the transfer indexed on time')

    // 30-second blocks: an hour of chain time per step, far past the 30-minute look-back.
    fake.mine(120, 30_000)
    assert.equal((await scanTron()).transfers, 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)

    fake.mine(120, 30_000)
    fake.requests = []
    const report = await scanTron()
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, late.txid)
    assert.deepEqual(
      receiptLookups(fake),
      [late.txid],
      'the transfer reported earlier is not looked up again'
    )
    const deep = fake
      .requestsTo('trc20')
      .filter(
        (request) =>
          request.query.get('contract_address') === USDT_CONTRACT &&
          request.query.get('max_timestamp')
      )
    assert.lengthOf(deep, 1, 'one deep listing of the stream')
    assert.isAtMost(Number(deep[0].query.get('min_timestamp')), onTime.timestamp)
    const cursor = await savedCursor()
    assert.isNull(cursor.deep, 'the pass is complete')

    // Not due again within the hour; when due, it finds nothing new and credits nothing twice.
    fake.mine(60, 30_000)
    fake.requests = []
    await scanTron()
    assert.lengthOf(
      fake.requestsTo('trc20').filter((request) => request.query.get('max_timestamp')),
      0
    )
    fake.mine(80, 30_000)
    fake.requests = []
    const again = await scanTron()
    assert.isAbove(
      fake.requestsTo('trc20').filter((request) => request.query.get('max_timestamp')).length,
      0
    )
    assert.equal(again.transfers, 0)
    assert.deepEqual(receiptLookups(fake), [])
    assert.equal(await countRows('orders', { status: 2 }), 2)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('the look-back and the deep re-scan are chain options, validated', async ({ assert }) => {
    const refused = await runAce(['chain:set', 'tron', '--option', 'lookbackMinutes=5'])
    assert.notEqual(refused.code, 0)
    assert.match(
      refused.stdout + refused.stderr,
      /lookbackMinutes must be a whole number from 10 to 1440/
    )
    const unknown = await runAce(['chain:set', 'tron', '--option', 'overlap=5'])
    assert.notEqual(unknown.code, 0)
    assert.match(unknown.stdout + unknown.stderr, /Unknown TRON option "overlap"/)

    const accepted = await runAce([
      'chain:set',
      'tron',
      '--option',
      'lookbackMinutes=60',
      '--option',
      'deepScanHours=0',
    ])
    assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr)
    const row = await db.from('chains').where('network', 'tron').first()
    const options = typeof row.options === 'string' ? JSON.parse(row.options) : row.options
    assert.deepEqual(options, { lookbackMinutes: 60, deepScanHours: 0 })

    // deepScanHours=0: no deep listing however long it has been.
    fake.mine(19)
    await scanTron()
    fake.mine(300, 30_000)
    fake.requests = []
    await scanTron()
    assert.lengthOf(
      fake.requestsTo('trc20').filter((request) => request.query.get('max_timestamp')),
      0
    )
    // The next listings start 60 minutes before the solid head.
    assert.equal((await savedCursor()).since, fake.solidHead.timestamp - 60 * 60_000)
  })
})

test.group('TRON providers: limits and odd answers', (group) => {
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

  test('a run stopped by the rate limit keeps its progress; the next resumes where it stopped', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    await scanTron()
    // Twelve transfers nobody ordered (above the dust bar), then the payment.
    const stray = []
    for (let index = 1; index <= 12; index++) {
      const amount = baseUnits(order.actualAmount) + BigInt(index) * 10_000n
      stray.push(
        fake.payTrc20({ from: network.payer, to: network.wallet, contract: USDT_CONTRACT, amount })
      )
    }
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)

    // Eight requests, then TronGrid's 403 and its penalty of 30 s: two
    // heads, the listings of the streams before USDT, its listing, some
    // receipts.
    fake.rateLimit({ capacity: 8, perSecond: 0, status: 403, penaltyMs: 30_000 })
    fake.requests = []
    const first = await scanTron()
    assert.match(first.interrupted ?? '', /403.*suspended for 30s/)
    const done = first.transfers
    assert.isAbove(done, 0)
    assert.isBelow(done, 12)
    assert.equal(first.unmatched, done)
    // The last one asked is the request the limit refused.
    assert.deepEqual(
      receiptLookups(fake),
      stray.slice(0, done + 1).map((entry) => entry.txid)
    )
    const cursor = await savedCursor()
    assert.equal(
      cursor.lagging[`${network.wallet}|${USDT_CONTRACT}`],
      stray[done].timestamp,
      'resumes at the first row not handled'
    )
    const chainRow = await db.from('chain_cursors').where('network', 'tron').first()
    assert.match(chainRow.last_error, /^interrupted: /)

    // During the penalty the URL is not asked at all (each request would be refused and counted).
    fake.requests = []
    const [during] = await chainScanner.scan({ network: 'tron' })
    assert.isFalse(during.scanned)
    assert.match(during.detail, /no configured RPC endpoint can serve this request/)
    assert.lengthOf(fake.requests, 0)
    assert.isFalse(notPenalised(fake.url))

    // The penalty over (as if its 30 s had passed: the same announcement, dated
    // 30 s back) and a fresh quota.
    notePenalty(fake.url, 'the query server is suspended for 30s', Date.now() - 30_000)
    assert.isTrue(notPenalised(fake.url))
    fake.rateLimit(null)
    fake.requests = []
    const second = await scanTron()
    assert.isNull(second.interrupted)
    assert.equal(second.paid, 1)
    assert.equal(second.unmatched, 12 - done)
    const secondReceipts = receiptLookups(fake)
    assert.deepEqual(
      secondReceipts,
      [...stray.slice(done).map((entry) => entry.txid), paid.txid],
      'nothing answered before is asked again'
    )
    const usdt = fake
      .requestsTo('trc20')
      .filter((request) => request.query.get('contract_address') === USDT_CONTRACT)
    assert.equal(Number(usdt[0].query.get('min_timestamp')), stray[done].timestamp)
    assert.equal(await countRows('unmatched_payments'), 12)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
    assert.equal((await db.from('chain_cursors').where('network', 'tron').first()).last_error, '')
  })

  test('a 429 burst limit is waited out inside the run, not an interruption', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    // The first request is refused for certain; the bucket (2 at once, 4/s) may refuse more on a fast machine.
    fake.rateLimit({ capacity: 2, perSecond: 4, status: 429, penaltyMs: 0, refuseNext: 1 })
    const report = await scanTron()
    assert.isAbove(fake.refused, 0, 'the limit was hit')
    assert.isNull(report.interrupted)
    assert.equal(report.paid, 1)
  })

  test('pages that end early (fewer rows than the limit) are followed by their fingerprint', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    for (let index = 1; index <= 15; index++) {
      const amount = baseUnits(order.actualAmount) + BigInt(index) * 10_000n
      fake.payTrc20({ from: network.payer, to: network.wallet, contract: USDT_CONTRACT, amount })
    }
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    fake.shortPageRows = 7
    fake.requests = []
    const report = await scanTron()
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
    const usdt = fake
      .requestsTo('trc20')
      .filter((request) => request.query.get('contract_address') === USDT_CONTRACT)
    assert.lengthOf(usdt, 3, 'pages of 7, 7 and 2 rows asked with limit 200')
  })

  test('a busy address cut at the page bound resumes where it stopped, not at the window start', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    await scanTron()
    const stray = []
    for (let index = 1; index <= 40; index++) {
      const amount = baseUnits(order.actualAmount) + BigInt(index) * 10_000n
      stray.push(
        fake.payTrc20({ from: network.payer, to: network.wallet, contract: USDT_CONTRACT, amount })
      )
    }
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    // Pages of 7 rows: a run reads 5 pages (35 rows) of a stream at most.
    fake.shortPageRows = 7
    fake.requests = []
    const first = await scanTron()
    assert.isFalse(first.caughtUp)
    assert.equal(first.transfers, 35)
    const asked = new Set(receiptLookups(fake))

    fake.requests = []
    const second = await scanTron()
    assert.equal(second.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
    const usdt = fake
      .requestsTo('trc20')
      .filter((request) => request.query.get('contract_address') === USDT_CONTRACT)
    assert.equal(Number(usdt[0].query.get('min_timestamp')), stray[34].timestamp)
    assert.lengthOf(usdt, 1, 'the rows left fit one page')
    assert.isTrue(
      receiptLookups(fake).every((txid) => !asked.has(txid)),
      'no receipt asked twice'
    )
    assert.equal(await countRows('unmatched_payments'), 40)
  })

  test('a row the index returns malformed is recorded as unmatched with the reason, once; the rest is paid', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    const broken = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 5_000_000n,
    })
    fake.corruptListing(broken.txid, { value: '5e6' })
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    const report = await scanTron()
    assert.equal(report.paid, 1)
    assert.equal(report.unreadable, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
    const rows = await UnmatchedPayment.all()
    assert.lengthOf(rows, 1)
    assert.equal(rows[0].reference, broken.txid)
    assert.equal(rows[0].toAddress, network.wallet)
    assert.equal(rows[0].token, 'USDT')
    assert.match(rows[0].reason, /unreadable transaction: TRC-20 row with an unreadable value/)
    assert.notInclude(receiptLookups(fake), broken.txid)

    const again = await scanTron()
    assert.equal(again.unreadable, 0, 'listed again inside the look-back, not recorded again')
    assert.equal(await countRows('unmatched_payments'), 1)
  })
})

test.group('TRON providers: a backup node without the v1 index', (group) => {
  const fake = new FakeTronGrid()
  let network: TronTestNetwork

  group.setup(async () => {
    await fake.start()
    await fake.startBackup()
    return () => fake.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    network = await prepareTronNetwork(fake, { rpcUrls: [fake.backupUrl, fake.url] })
  })

  test('listed first, it serves the heads but never the listings; TronGrid lists', async ({
    client,
    assert,
  }) => {
    const order = await newTronOrder(client)
    const paid = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    fake.mine(19)
    const report = await scanTron()
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, paid.txid)
    const listings = (via: 'main' | 'backup') =>
      fake.requests.filter((request) => request.via === via && request.path.startsWith('/v1/'))
    assert.lengthOf(listings('backup'), 1, 'one probe, answered 404')
    assert.lengthOf(listings('main'), 3)

    fake.requests = []
    await scanTron()
    await scanTron()
    assert.lengthOf(listings('backup'), 0, 'known to lack the index: never asked again')
    assert.lengthOf(listings('main'), 6)
    const heads = fake.requests.filter((request) => request.path.endsWith('/getblock'))
    assert.isTrue(
      heads.every((request) => request.via === 'backup'),
      'the preferred URL still serves the heads'
    )
  })

  test('TronGrid down: verification works through the backup, the scan stops without listing there', async ({
    client,
    assert,
  }) => {
    const submitted = await newTronOrder(client)
    const marked = await newTronOrder(client)
    const first = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(submitted.actualAmount),
    })
    const second = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(marked.actualAmount),
    })
    fake.mine(19)
    const dead = CLOSED_URL
    await db
      .from('chains')
      .where('network', 'tron')
      .update({ rpc_urls: JSON.stringify([dead, fake.backupUrl]) })
    RpcPool.reset()

    const response = await submit(client, submitted.tradeId, first.txid)
    response.assertStatus(200)
    assert.equal(response.body().data.status, 2)
    const result = await runAce(['orders:mark-paid', marked.tradeId, second.txid])
    assert.equal(result.code, 0, result.stdout + result.stderr)
    assert.equal((await Order.findOrFail(marked.id)).blockTransactionId, second.txid)
    assert.isTrue(fake.requests.every((request) => request.via === 'backup'))

    fake.requests = []
    const [report] = await chainScanner.scan({ network: 'tron' })
    assert.match(report.detail, /interrupted|scan failed/)
    const served = fake.requests.filter((request) => request.path.startsWith('/v1/'))
    assert.isAtMost(served.length, 1, 'at most the one probe')
    assert.equal(await countRows('unmatched_payments'), 0)
  })
})
