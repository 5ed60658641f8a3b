import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import chainScanner from '#services/chain_scanner'
import balanceWatch from '#services/balance_watch'
import settings from '#settings/settings_service'
import { registry } from '#support/runtime/metrics'
import { resetDatabase } from '#tests/helpers/database'
import { prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_USDT, FAKE_WALLET, fakeFamily } from '#tests/helpers/fake_chain'
import type { SeenAmount } from '#chains/chain_family'

/**
 * The balance watch in the core, through the fake family: a rise of a
 * watched balance larger than the incoming amounts the scanner saw is
 * recorded as an unexplained incoming amount. The families' own readings
 * are tested with their chains (tests/functional/chains/).
 */

function seen(
  reference: string,
  amount: string,
  height: string,
  overrides: Partial<SeenAmount> = {}
): SeenAmount {
  return {
    reference,
    position: 'log:0',
    to: FAKE_WALLET,
    contract: FAKE_USDT,
    amount,
    height,
    ...overrides,
  }
}

/** One scan that reads `amount` USDT on the fake wallet as of `height` (the watch made due first). */
async function readAt(height: string, amount: string, amounts: SeenAmount[] = []) {
  await db.from('balance_readings').update({ read_at: 0 })
  fakeFamily.seen = amounts
  fakeFamily.balances = {
    height,
    readings: [{ address: FAKE_WALLET, contract: FAKE_USDT, amount }],
  }
  const [report] = await chainScanner.scan({ network: FAKE_NETWORK })
  if (report.detail.startsWith('scan failed')) throw new Error(report.detail)
}

async function unexplained() {
  return db.from('unmatched_payments').where('kind', 'unexplained').orderBy('id')
}

async function counter(): Promise<number> {
  const metric = await registry.getSingleMetric('gateway_unexplained_incoming_total')!.get()
  return metric.values
    .filter((value) => value.labels.network === FAKE_NETWORK)
    .reduce((sum, value) => sum + value.value, 0)
}

test.group('Balance watch', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('a rise the transfers seen explain records nothing; a larger one records the excess with its window', async ({
    assert,
  }) => {
    const before = await counter()
    await readAt('100', '50')
    assert.lengthOf(await unexplained(), 0, 'the first reading is the baseline')

    // +13.8 seen at height 105, read at 110: explained.
    await readAt('110', '63.8', [seen('0xaa', '13.8', '105')])
    assert.lengthOf(await unexplained(), 0)

    // +30 between 110 and 120, only 5 seen: 25 came in unseen.
    await readAt('120', '93.8', [seen('0xbb', '5', '115')])
    const [row] = await unexplained()
    assert.equal(row.amount, '25')
    assert.equal(row.token, 'USDT')
    assert.equal(row.to_address, FAKE_WALLET)
    assert.equal(row.reference, 'balance:110-120')
    assert.match(row.reason, /rose by 30 USDT .*heights 110–120.*explain 5/)
    assert.equal(await counter(), before + 1)
  })

  test('amounts seen above a reading wait for the next one; amounts seen twice count once', async ({
    assert,
  }) => {
    await readAt('100', '0')
    // Seen at 105 and 125 in this run, read at 110: 10 explained now, 7 kept for later.
    await readAt('110', '10', [seen('0xaa', '10', '105'), seen('0xcc', '7', '125')])
    assert.lengthOf(await unexplained(), 0)
    // The same transfer seen again (a rescan) is not counted twice: 0xcc explains 7 of +14.
    await readAt('130', '24', [seen('0xcc', '7', '125')])
    const [row] = await unexplained()
    assert.equal(row.amount, '7')
  })

  test('outgoing transfers lower a balance: a fall or a smaller rise is never reported', async ({
    assert,
  }) => {
    await readAt('100', '100')
    await readAt('110', '40', [seen('0xaa', '10', '105')])
    await readAt('120', '45', [seen('0xbb', '20', '115')])
    assert.lengthOf(await unexplained(), 0)
  })

  test('a reading not past the last one (a lagging node) is ignored', async ({ assert }) => {
    await readAt('100', '10')
    await readAt('90', '999')
    await readAt('100', '999')
    assert.lengthOf(await unexplained(), 0)
    const reading = await db.from('balance_readings').first()
    assert.equal(reading.amount, '10')
    assert.equal(reading.height, '100')
  })

  test('due once per chains.balance_check_minutes; 0 turns the watch off', async ({ assert }) => {
    assert.isTrue(await balanceWatch.due(FAKE_NETWORK))
    await readAt('100', '10')
    assert.isFalse(await balanceWatch.due(FAKE_NETWORK))
    assert.isTrue(await balanceWatch.due(FAKE_NETWORK, Date.now() + 10 * 60_000 + 1))
    // Not due: the family is not asked, and what it would read is not used.
    fakeFamily.balances = {
      height: '200',
      readings: [{ address: FAKE_WALLET, contract: FAKE_USDT, amount: '1000' }],
    }
    await chainScanner.scan({ network: FAKE_NETWORK })
    assert.isFalse(fakeFamily.scans.at(-1)!.readBalances)
    assert.equal((await db.from('balance_readings').first()).height, '100')

    await settings.set('chains.balance_check_minutes', '0')
    assert.isFalse(await balanceWatch.due(FAKE_NETWORK, Date.now() + 86_400_000))
  })

  test('an unexplained amount is a notice: it can be dismissed, not assigned to an order', async ({
    assert,
  }) => {
    await readAt('100', '0')
    await readAt('110', '13.8')
    const [row] = await unexplained()
    const { default: admin } = await import('#services/operators/unmatched_payment_admin')
    await assert.rejects(
      () => admin.assign(Number(row.id), 'any'),
      /unexplained balance change, not a transfer: it can only be dismissed/
    )
    const listed = await admin.find(Number(row.id))
    assert.equal(listed?.kind, 'unexplained')
  })

  test('a transfer listed late explains its window afterwards: the notice shrinks, and is set aside once all is explained', async ({
    assert,
  }) => {
    await readAt('100', '0')
    await readAt('110', '10')
    let [row] = await unexplained()
    assert.equal(row.amount, '10')

    // A run without a reading sees 4 of it late (an index that lists late): 6 still unexplained.
    fakeFamily.seen = [seen('0xlate1', '4', '104')]
    await chainScanner.scan({ network: FAKE_NETWORK })
    ;[row] = await unexplained()
    assert.equal(row.amount, '6')
    assert.match(row.reason, /\(4 seen late since\)$/)
    assert.isNull(row.dismissed_at)

    // The rest: the notice is set aside by the gateway, saying why; nothing is counted twice.
    fakeFamily.seen = [seen('0xlate2', '6', '108'), seen('0xlate1', '4', '104')]
    await chainScanner.scan({ network: FAKE_NETWORK })
    ;[row] = await unexplained()
    assert.isNotNull(row.dismissed_at)
    assert.equal(row.dismissed_by, 'system')
    assert.match(row.dismiss_note, /the scanner saw the transfer late \(0xlate2\)/)
    assert.lengthOf(await db.from('balance_seen'), 0)
  })

  test('a reading may carry its own height (reads of one run at different heights)', async ({
    assert,
  }) => {
    await readAt('100', '0')
    await db.from('balance_readings').update({ read_at: 0 })
    fakeFamily.seen = [seen('0xaa', '5', '104')]
    fakeFamily.balances = {
      height: '110',
      readings: [{ address: FAKE_WALLET, contract: FAKE_USDT, amount: '5', height: '105' }],
    }
    await chainScanner.scan({ network: FAKE_NETWORK })
    assert.lengthOf(await unexplained(), 0)
    assert.equal((await db.from('balance_readings').first()).height, '105')
  })
})
