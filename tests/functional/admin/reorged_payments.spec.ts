import walletAdmin from '#services/operators/wallet_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import chainScanner from '#services/chain_scanner'
import paymentService from '#services/payment_service'
import reorgFlags from '#services/reorg_flags'
import orderDetails from '#services/admin/order_detail'
import { utcSecond } from '#services/admin/admin_format'
import { emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { TRON_WALLET } from '#tests/helpers/merchant'
import { FAKE_NETWORK, fakeFamily, fakeTransfer } from '#tests/helpers/fake_chain'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'

const OLD_HASH = `0x${'a1'.repeat(32)}`
const NEW_HASH = `0x${'b2'.repeat(32)}`

let references = 0

/** Pays `order` by the scanner with a transfer read from block 120 (OLD_HASH), at `position`. */
async function paidFromBlock(order: Order, position = 'log:3') {
  const reference = `0xreorg${String(++references).padStart(8, '0')}`
  const transfer = fakeTransfer(reference, order.actualAmount, {
    position,
    block: { number: '120', hash: OLD_HASH },
  })
  fakeFamily.pending = [transfer]
  await chainScanner.scan({ network: FAKE_NETWORK })
  if ((await Order.findOrFail(order.id)).status !== 2)
    throw new Error('the scanner did not pay the order')
  return transfer
}

/** A reorganisation above block 100 replacing up to 130, as a family reports it to the scanner. */
async function reorganise() {
  const chain = await Chain.findByOrFail('network', FAKE_NETWORK)
  return reorgFlags.flag(chain, { ancestor: '100', replacedUpTo: '130' })
}

async function details(tradeId: string) {
  const service = orderDetails
  return (await service.find(tradeId))!
}

test.group('Console order page: a payment whose block a reorganisation replaced', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('each payment reference shows its position in words and its block', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const transfer = await paidFromBlock(order, 'log:3')
    const detail = await details(order.tradeId)
    assert.lengthOf(detail.references, 1)
    assert.deepInclude(detail.references[0], {
      reference: transfer.reference,
      position: 'log:3',
      positionText: 'log 3',
      block: { number: '120', hash: OLD_HASH },
      reorgedAt: null,
    })
    assert.deepEqual(detail.reorgs, [])
    const agent = await AdminAgent.signIn(await createAdminUser())
    const page = pageText((await agent.get(`/orders/${order.tradeId}`)).text)
    assert.include(page, `${transfer.reference} log 3 · block 120 · recorded`)
    assert.notInclude(page, 'reorganisation')
    assert.notInclude(page, 'Block replaced')
  })

  test('flagged, not found again: a danger notice names the replaced block and links the inbox row; found again: where', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const transfer = await paidFromBlock(order, 'log:3')
    assert.equal(await reorganise(), 1)
    const [flag] = await db.from('unmatched_payments').where('kind', 'reorged')
    const reference = await db.from('payment_references').where('order_id', order.id).first()
    const reorgedAt = Number(reference.reorged_at)

    const before = await details(order.tradeId)
    assert.deepEqual(before.reorgs, [
      {
        tradeId: order.tradeId,
        reference: transfer.reference,
        positionText: 'log 3',
        replacedBlock: { number: '120', hash: OLD_HASH },
        reorgedAt,
        foundAgain: null,
        inbox: { id: Number(flag.id), state: 'open' },
      },
    ])

    const agent = await AdminAgent.signIn(await createAdminUser())
    const response = await agent.get(`/orders/${order.tradeId}`)
    const page = pageText(response.text)
    assert.include(page, 'This order’s payment may be gone: a reorganisation replaced its block')
    assert.include(
      page,
      `The payment ${transfer.reference} (log 3) came from block 120 (${OLD_HASH}) , which a reorganisation replaced on ${utcSecond(reorgedAt)}.`
    )
    assert.include(page, 'Not found again in the new chain yet.')
    // (pageText puts a space where a tag ends: the browser shows "#1, waiting".)
    assert.include(page, `See unmatched payment #${flag.id} , waiting for you`)
    assert.include(response.text, `href="/admin/unmatched/${flag.id}"`)
    assert.include(response.text, 'class="alert alert-danger"')
    assert.include(page, `${transfer.reference} Block replaced log 3 · block 120 · recorded`)

    // The scan meets the same transfer in the new chain, in block 125: recorded, nothing paid twice.
    fakeFamily.pending = [{ ...transfer, block: { number: '125', hash: NEW_HASH } }]
    await chainScanner.scan({ network: FAKE_NETWORK })
    assert.equal(Number((await db.from('payment_references').count('* as total'))[0].total), 1)

    const after = await details(order.tradeId)
    assert.deepInclude(after.reorgs[0], {
      replacedBlock: { number: '120', hash: OLD_HASH },
      foundAgain: { number: '125', hash: NEW_HASH },
    })
    const moved = await agent.get(`/orders/${order.tradeId}`)
    const text = pageText(moved.text)
    assert.include(text, 'This order’s payment was moved by a reorganisation')
    assert.include(text, `came from block 120 (${OLD_HASH})`)
    assert.include(
      text,
      `Found again in block 125 (${NEW_HASH}) of the new chain: the payment stands, and nothing was paid twice.`
    )
    assert.include(moved.text, 'class="alert alert-warning"')
    assert.notInclude(text, 'Not found again')

    // Handled in the inbox: the order page says so.
    await agent.get(`/unmatched/${flag.id}`)
    await agent.post(`/unmatched/${flag.id}/dismiss`, {
      note: 'Found again in block 125, nothing to do',
    })
    assert.include(
      pageText((await agent.get(`/orders/${order.tradeId}`)).text),
      `Unmatched payment #${flag.id} was marked as handled.`
    )
  })

  test('a parent paid through its child shows the notice on both pages, naming the child', async ({
    client,
    assert,
  }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const parent = await newOrder(client)
    const switched = await switchTo(client, parent.tradeId, 'tron')
    const child = await Order.findByOrFail('trade_id', switched.body().data.trade_id)
    assert.equal(child.parentId, parent.id)
    // Paid through the one payment path, as the TRON scanner would, from block 120.
    const reference = 'c0ffee'.padEnd(64, '0')
    await paymentService.markPaid(child.id, {
      reference,
      position: 'value',
      block: { number: '120', hash: OLD_HASH },
      source: 'scanner',
    })
    assert.equal(
      await reorgFlags.flag(await Chain.findByOrFail('network', 'tron'), {
        ancestor: '100',
        replacedUpTo: '130',
      }),
      1
    )

    const agent = await AdminAgent.signIn(await createAdminUser())
    const parentPage = pageText((await agent.get(`/orders/${parent.tradeId}`)).text)
    assert.include(
      parentPage,
      `The payment ${reference} (transaction value), recorded on the child order ${child.tradeId}, came from block 120 (${OLD_HASH})`
    )
    const childPage = pageText((await agent.get(`/orders/${child.tradeId}`)).text)
    assert.include(childPage, `The payment ${reference} (transaction value) came from block 120`)
  })

  test('without the audit row, the inbox notice says which block it came from and where it is now', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const transfer = await paidFromBlock(order, 'log:0')
    await reorganise()
    fakeFamily.pending = [{ ...transfer, block: { number: '126', hash: NEW_HASH } }]
    await chainScanner.scan({ network: FAKE_NETWORK })
    // Without the audit rows (an installation restored without them): only the notice's reason is left.
    await emptyAuditLog()
    const detail = await details(order.tradeId)
    assert.deepInclude(detail.reorgs[0], {
      replacedBlock: { number: '120', hash: `${OLD_HASH.slice(0, 10)}…` },
      foundAgain: { number: '126', hash: `${NEW_HASH.slice(0, 10)}…` },
    })
  })
})
