import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import chainScanner from '#services/chain_scanner'
import { recordUnmatched } from '#services/unmatched_inbox'
import { presentUnmatched } from '#services/admin/unmatched_presenter'
import type { UnmatchedRow } from '#services/operators/unmatched_payment_admin'
import type { SeenAmount } from '#chains/chain_family'
import { emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_USDT, FAKE_WALLET, fakeFamily } from '#tests/helpers/fake_chain'
import { latePayment, reorgedPayment } from '#tests/helpers/unmatched_payments'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'

/**
 * The unmatched inbox's four kinds, each written by the code that writes
 * it in production (the scanner, the balance watch, the reorganisation
 * flags): shown with their kind in words, the position, the order a
 * reorganised payment is about; assignable or only marked as handled.
 */

let references = 0
const nextReference = (prefix: string) => `${prefix}${String(++references).padStart(6, '0')}`

/** A transaction the family could not read: kind `unreadable`, no position. */
async function unreadable() {
  const reference = nextReference('0xunread')
  fakeFamily.unreadable = [
    {
      reference,
      to: FAKE_WALLET,
      contract: FAKE_USDT,
      timestamp: Date.now(),
      reason: 'the node returned no receipt',
    },
  ]
  await chainScanner.scan({ network: FAKE_NETWORK })
  return db.from('unmatched_payments').where('reference', reference).first()
}

function seen(reference: string, amount: string, height: string): SeenAmount {
  return { reference, position: 'log:0', to: FAKE_WALLET, contract: FAKE_USDT, amount, height }
}

/** One scan reading `amount` USDT on the fake wallet at `height` (the watch made due first). */
async function readAt(height: string, amount: string, amounts: SeenAmount[] = []) {
  // Made due: the last reading an hour old.
  await db.from('balance_readings').update({ read_at: Date.now() - 3_600_000 })
  fakeFamily.seen = amounts
  fakeFamily.balances = {
    height,
    readings: [{ address: FAKE_WALLET, contract: FAKE_USDT, amount }],
  }
  await chainScanner.scan({ network: FAKE_NETWORK })
}

/** The balance rose by 10 between heights 100 and 110 with nothing seen: kind `unexplained`. */
async function unexplained() {
  await readAt('100', '0')
  await readAt('110', '10')
  return db.from('unmatched_payments').where('kind', 'unexplained').orderBy('id', 'desc').first()
}

function rowOf(overrides: Partial<UnmatchedRow>): UnmatchedRow {
  return {
    id: 1,
    network: 'ethereum',
    reference: '0xabc',
    position: '',
    kind: 'transfer',
    orderTradeId: null,
    toAddress: '0xwallet',
    token: 'USDT',
    amount: '12.5',
    transferTime: 1_750_000_000_000,
    reason: 'no order waits for this amount',
    detectedAt: 1_750_000_060_000,
    state: 'open',
    assignedTradeId: null,
    assignedAt: null,
    assignedBy: null,
    dismissedAt: null,
    dismissedBy: null,
    dismissNote: null,
    ...overrides,
  }
}

test.group('Unmatched inbox presenter', () => {
  test('each kind in words with its tone; only transfers and unreadable ones are assignable', ({
    assert,
  }) => {
    const shown = ['transfer', 'unreadable', 'unexplained', 'reorged'].map((kind) =>
      presentUnmatched(rowOf({ kind }))
    )
    assert.deepEqual(
      shown.map((view) => [view.kindLabel, view.kindTone, view.assignable]),
      [
        ['Paid nothing', 'info', true],
        ['Unreadable', 'neutral', true],
        ['Unexplained incoming amount', 'warning', false],
        ['Reorganised payment', 'danger', false],
      ]
    )
  })

  test('position in words, the heights of an unexplained window, headlines', ({ assert }) => {
    assert.equal(presentUnmatched(rowOf({ position: 'ix:2.1' })).positionText, 'instruction 2.1')
    assert.equal(
      presentUnmatched(rowOf({ position: 'trace:0.1' })).positionText,
      'internal transfer 0.1'
    )
    assert.equal(presentUnmatched(rowOf({ position: '' })).positionText, '')
    const window = presentUnmatched(
      rowOf({ kind: 'unexplained', reference: 'balance:100-110', amount: '10' })
    )
    assert.deepEqual(window.heights, { from: '100', to: '110' })
    assert.equal(window.headline, '10 USDT came in on ethereum that no transfer seen explains.')
    assert.isNull(
      presentUnmatched(rowOf({ reference: 'balance:100-110' })).heights,
      'only an unexplained row has a window'
    )
    assert.equal(
      presentUnmatched(rowOf({ kind: 'reorged', orderTradeId: 'T'.repeat(22) })).headline,
      `The payment of order ${'T'.repeat(22)} on ethereum came from a block a reorganisation replaced.`
    )
    assert.equal(
      presentUnmatched(rowOf({ kind: 'unreadable', amount: '' })).headline,
      'An unreadable transfer received on ethereum.'
    )
    // PostgreSQL's NUMERIC keeps the column's scale: shown as written everywhere else.
    assert.equal(presentUnmatched(rowOf({ amount: '13.80000000' })).amountText, '13.8')
    assert.equal(
      presentUnmatched(rowOf({ amount: '13.80000000' })).headline,
      '13.8 USDT received on ethereum.'
    )
    assert.equal(presentUnmatched(rowOf({ amount: '' })).amountText, '')
  })

  test('states: waiting, dismissed (a transfer), handled (a notice), set aside by the gateway itself', ({
    assert,
  }) => {
    const at = Date.UTC(2026, 10, 26, 9, 30)
    assert.equal(presentUnmatched(rowOf({})).stateLabel, 'waiting')
    const dismissed = presentUnmatched(
      rowOf({
        state: 'dismissed',
        dismissedAt: at,
        dismissedBy: 'ops@example.com',
        dismissNote: 'refunded',
      })
    )
    assert.deepEqual(
      [dismissed.stateLabel, dismissed.settled],
      ['dismissed', 'Dismissed by ops@example.com at 2026-11-26 09:30 UTC.']
    )
    const handled = presentUnmatched(
      rowOf({
        kind: 'reorged',
        state: 'dismissed',
        dismissedAt: at,
        dismissedBy: 'ops@example.com',
        dismissNote: 'ok',
      })
    )
    assert.deepEqual(
      [handled.stateLabel, handled.settled, handled.bySystem],
      ['handled', 'Marked as handled by ops@example.com at 2026-11-26 09:30 UTC.', false]
    )
    const system = presentUnmatched(
      rowOf({
        kind: 'unexplained',
        state: 'dismissed',
        dismissedAt: at,
        dismissedBy: 'system',
        dismissNote: 'explained',
      })
    )
    assert.deepEqual(
      [system.stateLabel, system.settled, system.bySystem],
      ['handled', 'Set aside by the gateway itself at 2026-11-26 09:30 UTC.', true]
    )
  })
})

test.group('Console unmatched inbox: kinds', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await emptyAuditLog()
  })

  test('the list shows every kind in words, the position, the order of a reorganised payment; the kind filter', async ({
    client,
    assert,
  }) => {
    const { payment: transfer } = await latePayment(client, nextReference('0xlate'))
    const unread = await unreadable()
    const excess = await unexplained()
    const { order, row: flag } = await reorgedPayment(client, nextReference('0xreorged'))
    const agent = await AdminAgent.signIn(await createAdminUser())

    const list = await agent.get('/unmatched')
    const text = pageText(list.text)
    assert.include(text, '4 wait for you')
    assert.include(text, `#${transfer.id}`)
    assert.match(text, new RegExp(`#${transfer.id} [^#]*Paid nothing log 0 fakenet`))
    assert.match(text, new RegExp(`#${unread.id} [^#]*Unreadable fakenet \\? USDT`))
    assert.match(text, new RegExp(`#${excess.id} [^#]*Unexplained incoming amount fakenet 10 USDT`))
    assert.match(
      text,
      new RegExp(
        `#${flag.id} [^#]*Reorganised payment log 3 fakenet ${order.actualAmount} USDT ${FAKE_WALLET} Order ${order.tradeId} order ${order.tradeId} was credited from block 120`
      )
    )
    assert.include(list.text, `href="/admin/orders/${order.tradeId}"`)
    for (const kind of [
      'Any kind',
      'Paid nothing',
      'Unreadable',
      'Unexplained incoming amount',
      'Reorganised payment',
    ]) {
      assert.include(list.text, `>${kind}</option>`)
    }

    const onlyReorged = await agent.get('/unmatched?kind=reorged')
    assert.include(onlyReorged.text, `href="/admin/unmatched/${flag.id}"`)
    for (const other of [transfer, unread, excess])
      assert.notInclude(onlyReorged.text, `href="/admin/unmatched/${other.id}"`)
    assert.match(onlyReorged.text, /<option value="reorged" selected/)
    assert.include(onlyReorged.text, 'Reset')

    const none = await agent.get('/unmatched?kind=unexplained&state=assigned')
    const noneText = pageText(none.text)
    assert.include(noneText, 'No unmatched payment matches these filters')
    assert.include(noneText, 'Try another state or kind, or reset the filters.')
    assert.include(none.text, 'Show what waits for you')
    assert.equal((await agent.get('/unmatched?kind=lost')).status, 400)
    // Blank: any kind.
    assert.include(
      (await agent.get('/unmatched?kind=')).text,
      `href="/admin/unmatched/${transfer.id}"`
    )
  })

  test('the next page keeps the kind filter', async ({ assert }) => {
    for (let index = 0; index < 51; index++) {
      await recordUnmatched(FAKE_NETWORK, {
        reference: `balance:${index * 10}-${index * 10 + 10}`,
        position: '',
        kind: 'unexplained',
        to: FAKE_WALLET,
        token: 'USDT',
        amount: '1',
        timestamp: Date.now(),
        reason: 'unexplained incoming amount',
      })
    }
    const agent = await AdminAgent.signIn(await createAdminUser())
    const page = await agent.get('/unmatched?kind=unexplained')
    const next = /href="([^"]*after=[^"]*)"/.exec(page.text)?.[1].replace(/&amp;/g, '&')
    assert.isDefined(next)
    assert.include(next!, 'kind=unexplained')
    assert.include(pageText((await agent.get(next!)).text), '1 shown')
  })

  test('an unexplained amount: its window, no assign form; marked as handled with a note, said so', async ({
    assert,
  }) => {
    const excess = await unexplained()
    const user = await createAdminUser()
    const agent = await AdminAgent.signIn(user)
    const page = await agent.get(`/unmatched/${excess.id}`)
    const text = pageText(page.text)
    assert.include(text, '10 USDT came in on fakenet that no transfer seen explains.')
    assert.include(text, 'Unexplained incoming amount waiting for you')
    assert.include(text, 'What was seen unexplained incoming amount: the balance rose by 10 USDT')
    assert.include(text, 'Unexplained amount 10 USDT')
    assert.include(text, 'Between heights 100 and 110')
    assert.notInclude(text, 'Reference balance:')
    assert.notInclude(page.text, `/unmatched/${excess.id}/assign`)
    assert.notInclude(text, 'Pay this order')
    assert.include(text, 'Mark as handled')

    // Assigning anyway (a forged form) is refused by the service, with its words.
    const forged = await agent.post(`/unmatched/${excess.id}/assign`, { trade_id: 'x'.repeat(22) })
    assert.equal(forged.location, `/admin/unmatched/${excess.id}`)
    assert.include(
      pageText((await agent.get(`/unmatched/${excess.id}`)).text),
      'not a transfer: it can only be dismissed'
    )

    const handled = await agent.post(`/unmatched/${excess.id}/dismiss`, {
      note: 'A top-up from our exchange account, ticket 88',
    })
    assert.equal(handled.location, `/admin/unmatched/${excess.id}`)
    const after = pageText((await agent.get(`/unmatched/${excess.id}`)).text)
    assert.include(after, `Unmatched payment #${excess.id} is marked as handled.`)
    assert.include(after, `handled Marked as handled by ${user.email} at`)
    assert.include(after, 'Note A top-up from our exchange account, ticket 88')
    assert.notInclude(after, 'Mark as handled Nothing can be paid')
    const [audit] = await db.from('audit_log').where('action', 'unmatched.dismiss')
    assert.equal(audit.actor, user.email)
  })

  test('set aside by the gateway itself (the transfer seen late): the note says why, in the list and the detail', async ({
    assert,
  }) => {
    const excess = await unexplained()
    // The scanner lists the 10 late, at height 105: the notice is explained and set aside by the gateway.
    fakeFamily.seen = [seen('0xseenlate', '10', '105')]
    await chainScanner.scan({ network: FAKE_NETWORK })
    const row = await db.from('unmatched_payments').where('id', excess.id).first()
    assert.equal(row.dismissed_by, 'system')

    const agent = await AdminAgent.signIn(await createAdminUser())
    const detail = pageText((await agent.get(`/unmatched/${excess.id}`)).text)
    assert.include(detail, 'Set aside by the gateway itself at')
    assert.include(
      detail,
      'Why it was set aside explained: the scanner saw the transfer late (0xseenlate)'
    )
    assert.notInclude(detail, 'Mark as handled')
    assert.notInclude(pageText((await agent.get('/unmatched')).text), `#${excess.id}`)
    const dismissed = pageText((await agent.get('/unmatched?state=dismissed')).text)
    assert.include(
      dismissed,
      'Set aside by the gateway: explained: the scanner saw the transfer late (0xseenlate)'
    )
    assert.include(dismissed, 'handled')
  })

  test('a reorganised payment: the order linked, the position, marked as handled; a transfer keeps its assign form', async ({
    client,
    assert,
  }) => {
    const { order, row: flag } = await reorgedPayment(client, nextReference('0xreorged'))
    const { payment: transfer } = await latePayment(client, nextReference('0xlate'))
    const agent = await AdminAgent.signIn(await createAdminUser())
    const page = await agent.get(`/unmatched/${flag.id}`)
    const text = pageText(page.text)
    assert.include(
      text,
      `The payment of order ${order.tradeId} on fakenet came from a block a reorganisation replaced.`
    )
    assert.include(text, `What happened order ${order.tradeId} was credited from block 120`)
    assert.include(
      text,
      `Order ${order.tradeId} (paid; its page says whether the transfer was found again)`
    )
    assert.include(page.text, `href="/admin/orders/${order.tradeId}"`)
    assert.include(text, 'Position log 3 (log:3)')
    assert.include(text, `Amount paid ${order.actualAmount} USDT`)
    assert.notInclude(page.text, `/unmatched/${flag.id}/assign`)
    assert.include(
      text,
      'Check the order: once the transfer is found again in the new chain, or you have settled it with the merchant'
    )

    const other = pageText((await agent.get(`/unmatched/${transfer.id}`)).text)
    assert.include(other, 'Paid nothing waiting for you')
    assert.include(other, 'Position log 0 (log:0)')
    assert.include(other, 'Pay this order')
    assert.include(other, 'Dismiss this payment')
    assert.notInclude(other, 'Mark as handled')

    await agent.post(`/unmatched/${flag.id}/dismiss`, { note: 'Found again in block 125' })
    assert.include(
      pageText((await agent.get(`/unmatched/${flag.id}`)).text),
      `Unmatched payment #${flag.id} is marked as handled.`
    )
  })

  test('a viewer reads a notice without any form', async ({ client, assert }) => {
    const { row: flag } = await reorgedPayment(client, nextReference('0xreorged'))
    const agent = await AdminAgent.signIn(await createAdminUser({ role: 'viewer' }))
    const page = await agent.get(`/unmatched/${flag.id}`)
    assert.equal(page.status, 200)
    assert.include(
      pageText(page.text),
      'Your account can view unmatched payments but not settle them (role: viewer).'
    )
    assert.notInclude(page.text, '/dismiss')
    assert.equal((await agent.post(`/unmatched/${flag.id}/dismiss`, { note: 'no' })).status, 403)
  })
})
