import chainAdmin from '#services/operators/chain_admin'
import pluginRegistry from '#plugin_host/plugin_registry'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import Token from '#models/token'
import chainScanner from '#services/chain_scanner'
import orderExpiry from '#services/order_expiry'
import paymentSightings from '#services/payment_sightings'
import { explorerUrl } from '#chains/explorer_links'
import type { ObservedTransfer } from '#chains/chain_family'
import ChainSet from '#commands/chain_set'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { makeTronPayable } from '#tests/helpers/setup'
import { TRON_WALLET } from '#tests/helpers/merchant'
import {
  FAKE_NETWORK,
  FAKE_USDT,
  FAKE_WALLET,
  fakeFamily,
  fakeTransfer,
} from '#tests/helpers/fake_chain'
import { runCommand } from '#tests/helpers/ace_command'

/** Confirmations the fake network asks for in these tests. */
const REQUIRED = 5

function seen(
  reference: string,
  amount: string,
  overrides: Partial<ObservedTransfer> = {}
): ObservedTransfer {
  return {
    reference,
    position: 'log:0',
    to: FAKE_WALLET,
    contract: FAKE_USDT,
    amount,
    timestamp: Date.now(),
    confirmations: 2,
    success: true,
    ...overrides,
  }
}

async function scanFake() {
  const [report] = await chainScanner.scan({ network: FAKE_NETWORK })
  if (!report.scanned) throw new Error(report.detail)
  return report
}

async function progress(client: any, tradeId: string) {
  const response = await client.get(`/pay/payment-progress/${tradeId}`)
  response.assertStatus(200)
  return response.body().data
}

/** Ends the order's life 50 ms after its creation and runs the expiry. */
async function expireSoon(order: Order) {
  await db
    .from('orders')
    .where('id', order.id)
    .update({ expiration_time: order.createdAt + 50 })
  await new Promise((resolve) => setTimeout(resolve, 60))
  await orderExpiry.expireDue()
  if ((await Order.findOrFail(order.id)).status !== 3) throw new Error('order did not expire')
}

test.group('Payment progress: sightings (fake chain)', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await db.from('chains').where('network', FAKE_NETWORK).update({ confirmations: REQUIRED })
  })

  test('a transfer made within the order life is sighted; one made before it or after it is not', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeFamily.unconfirmed = [
      seen('tx-early', order.actualAmount, { timestamp: order.createdAt - 3_600_000 }),
      seen('tx-late', order.actualAmount, { timestamp: order.expirationTime + 1000 }),
    ]
    const report = await scanFake()
    assert.equal(report.unconfirmed, 2)
    assert.isNull((await progress(client, order.tradeId)).sighting)
    assert.equal(await countRows('payment_sightings'), 0)

    fakeFamily.unconfirmed = [seen('tx-1', order.actualAmount, { timestamp: order.createdAt + 10 })]
    const before = Date.now()
    await scanFake()
    const data = await progress(client, order.tradeId)
    assert.equal(data.status, 1)
    assert.isNull(data.payment)
    assert.containsSubset(data.sighting, {
      reference: 'tx-1',
      confirmations: 2,
      required_confirmations: REQUIRED,
      explorer_url: '',
    })
    assert.isAtLeast(data.sighting.seen_at, before)
    // never a payment
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('payment_references'), 0)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('failed transfers, other tokens and other amounts are no sighting', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeFamily.unconfirmed = [
      seen('tx-failed', order.actualAmount, { success: false }),
      seen('tx-token', order.actualAmount, { contract: 'fake:other' }),
      seen('tx-amount', '13.79'),
      seen('tx-address', order.actualAmount, { to: 'fake:someone' }),
    ]
    await scanFake()
    assert.isNull((await progress(client, order.tradeId)).sighting)
    assert.equal(await countRows('payment_sightings'), 0)
  })

  test('confirmations shown stay below the requirement, whatever the family counts', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeFamily.unconfirmed = [seen('tx-1', order.actualAmount, { confirmations: REQUIRED + 3 })]
    await scanFake()
    assert.equal((await progress(client, order.tradeId)).sighting.confirmations, REQUIRED - 1)
  })

  test('kept while the family does not look, gone when it no longer reports it', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeFamily.unconfirmed = [seen('tx-1', order.actualAmount)]
    await scanFake()
    const first = (await progress(client, order.tradeId)).sighting

    fakeFamily.unconfirmed = [seen('tx-1', order.actualAmount, { confirmations: 3 })]
    await scanFake()
    const again = (await progress(client, order.tradeId)).sighting
    assert.equal(again.confirmations, 3)
    assert.equal(again.seen_at, first.seen_at) // first seen, not last seen

    fakeFamily.unconfirmed = undefined
    await scanFake()
    assert.equal((await progress(client, order.tradeId)).sighting.reference, 'tx-1')

    fakeFamily.unconfirmed = []
    await scanFake()
    assert.isNull((await progress(client, order.tradeId)).sighting)
    assert.equal(await countRows('payment_sightings'), 0)
  })

  test('once confirmed it pays through the matcher and the sighting is gone, even reported again', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeFamily.unconfirmed = [seen('tx-1', order.actualAmount)]
    await scanFake()
    assert.equal(await countRows('payment_sightings'), 1)

    fakeFamily.unconfirmed = undefined // e.g. a run that did not look above the confirmed range
    fakeFamily.pending = [seen('tx-1', order.actualAmount, { confirmations: REQUIRED })]
    assert.equal((await scanFake()).paid, 1)
    assert.equal(await countRows('payment_sightings'), 0)

    fakeFamily.unconfirmed = [seen('tx-1', order.actualAmount)] // a lagging view of the same transfer
    await scanFake()
    assert.equal(await countRows('payment_sightings'), 0)
    assert.deepEqual(await progress(client, order.tradeId), {
      trade_id: order.tradeId,
      status: 2,
      sighting: null,
      payment: { reference: 'tx-1', explorer_url: '' },
    })
  })

  test('an order paid by submit-tx-hash shows no sighting of another transfer', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeFamily.unconfirmed = [seen('tx-other', order.actualAmount)]
    await scanFake()
    assert.isNotNull((await progress(client, order.tradeId)).sighting)

    fakeTransfer('tx-submitted', order.actualAmount)
    const submitted = await client
      .post(`/pay/submit-tx-hash/${order.tradeId}`)
      .json({ block_transaction_id: 'tx-submitted' })
      .accept('json')
    assert.equal(submitted.body().data?.status, 2, JSON.stringify(submitted.body()))
    const data = await progress(client, order.tradeId)
    assert.isNull(data.sighting)
    assert.equal(data.payment.reference, 'tx-submitted')

    await scanFake() // the transfer claims a paid order now: its row goes
    assert.equal(await countRows('payment_sightings'), 0)
  })

  test('an expired order shows a transfer made within its life (credited late once confirmed)', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    await expireSoon(order)
    fakeFamily.unconfirmed = [seen('tx-1', order.actualAmount, { timestamp: order.createdAt + 10 })]
    await scanFake()
    const data = await progress(client, order.tradeId)
    assert.equal(data.status, 3)
    assert.equal(data.sighting.reference, 'tx-1')

    fakeFamily.unconfirmed = []
    fakeFamily.pending = [
      seen('tx-1', order.actualAmount, {
        timestamp: order.createdAt + 10,
        confirmations: REQUIRED,
      }),
    ]
    assert.equal((await scanFake()).paid, 1)
    const paid = await progress(client, order.tradeId)
    assert.equal(paid.status, 2)
    assert.isNull(paid.sighting)
  })

  test("a parent shows its child's sighting (the payer's other target), with that chain's explorer link", async ({
    client,
    assert,
  }) => {
    await makeTronPayable()
    const parent = await newOrder(client)
    const switched = await switchTo(client, parent.tradeId, 'tron')
    const child = await Order.findByOrFail('trade_id', switched.body().data.trade_id)
    assert.equal(child.parentId, parent.id)

    const tron = await Chain.findByOrFail('network', 'tron')
    const tokens = await Token.query().where('network', 'tron')
    const usdt = tokens.find((token) => token.symbol === 'USDT')!
    const txid = 'ab'.repeat(32)
    const transfer: ObservedTransfer = {
      reference: txid,
      position: 'log:0',
      to: TRON_WALLET,
      contract: usdt.contract,
      amount: child.actualAmount,
      timestamp: Date.now(),
      confirmations: 4,
      success: true,
    }
    await paymentSightings.record(tron, tokens, [], [transfer])

    for (const order of [parent, child]) {
      const { sighting } = await progress(client, order.tradeId)
      assert.equal(sighting.reference, txid)
      assert.equal(sighting.required_confirmations, tron.confirmations)
      assert.equal(sighting.explorer_url, `https://tronscan.org/#/transaction/${txid}`)
    }
  })

  test('a failure to record sightings never stops the scan', async ({ client, assert }) => {
    const order = await newOrder(client)
    const record = paymentSightings.record
    paymentSightings.record = async () => {
      throw new Error('sightings table unavailable')
    }
    try {
      fakeFamily.unconfirmed = [seen('tx-2', '1')]
      fakeFamily.pending = [seen('tx-1', order.actualAmount, { confirmations: REQUIRED })]
      const report = await scanFake()
      assert.equal(report.paid, 1)
      const cursor = await db.from('chain_cursors').where('network', FAKE_NETWORK).first()
      assert.equal(cursor.last_error, '')
      assert.deepEqual(JSON.parse(cursor.cursor), { scans: 1 })
    } finally {
      paymentSightings.record = record
    }
  })

  test('unknown or malformed trade_id: 10008 in the envelope', async ({ client, assert }) => {
    for (const tradeId of ['NoSuchTradeId12345678', 'x'.repeat(80)]) {
      const response = await client.get(`/pay/payment-progress/${tradeId}`)
      response.assertStatus(400)
      assert.equal(response.body().status_code, 10008)
      assert.isNull(response.body().data)
    }
  })
})

test.group('Explorer links', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('the default networks come with an explorer template', async ({ assert }) => {
    const seeded = pluginRegistry.enabled.flatMap((plugin) => plugin.seed?.chains ?? [])
    assert.isAtLeast(seeded.length, 7)
    const chains = await Chain.query().whereIn(
      'network',
      seeded.map((chain) => chain.network)
    )
    assert.lengthOf(chains, seeded.length)
    for (const chain of chains) {
      assert.match(chain.explorerTxUrl, /^https:\/\/[^ ]+\{tx\}/, chain.network)
    }
    assert.equal(
      (await Chain.findByOrFail('network', 'ethereum')).explorerTxUrl,
      'https://etherscan.io/tx/{tx}'
    )
  })

  test('chain:set --explorer sets, validates and clears the template', async ({ assert }) => {
    const set = await runCommand(ChainSet, [
      FAKE_NETWORK,
      '--explorer=https://explorer.example/tx/{tx}?from=gateway',
    ])
    assert.equal(set.exitCode, 0, set.output)
    assert.match(set.output, /explorer: https:\/\/explorer\.example\/tx\/\{tx\}\?from=gateway/)
    const chain = await Chain.findByOrFail('network', FAKE_NETWORK)
    // the reference is URL-encoded into the template
    assert.equal(
      explorerUrl(chain, 'tx/1 a'),
      'https://explorer.example/tx/tx%2F1%20a?from=gateway'
    )

    const refusals: [string, RegExp][] = [
      ['https://explorer.example/tx/', /must contain \{tx\}/],
      ['ftp://explorer.example/{tx}', /must be an http\(s\) URL/],
      ['javascript:alert({tx})', /must be an http\(s\) URL/],
      ['explorer.example/tx/{tx}', /is not a URL/],
    ]
    for (const [template, message] of refusals) {
      const refused = await runCommand(ChainSet, [FAKE_NETWORK, `--explorer=${template}`])
      assert.equal(refused.exitCode, 1, template)
      assert.match(refused.output, message)
    }
    assert.equal(
      (await Chain.findByOrFail('network', FAKE_NETWORK)).explorerTxUrl,
      'https://explorer.example/tx/{tx}?from=gateway'
    )

    const cleared = await runCommand(ChainSet, [FAKE_NETWORK, '--explorer='])
    assert.equal(cleared.exitCode, 0, cleared.output)
    const none = await Chain.findByOrFail('network', FAKE_NETWORK)
    assert.equal(none.explorerTxUrl, '')
    assert.equal(explorerUrl(none, 'tx-1'), '')
  })

  test('TON links name the transaction hash, not the canonical reference', async ({ assert }) => {
    const ton = await Chain.findByOrFail('network', 'ton')
    const hash = 'c0ffee'.padEnd(64, '0')
    const reference = `ton:0:${'1'.repeat(64)}:47000000000001:${hash}`
    assert.equal(explorerUrl(ton, reference), `https://tonviewer.com/transaction/${hash}`)
  })

  test('a provider payment has no explorer link', async ({ client, assert }) => {
    const order = await newOrder(client)
    await chainAdmin.set(FAKE_NETWORK, { explorerTxUrl: 'https://explorer.example/tx/{tx}' })
    await db
      .from('orders')
      .where('id', order.id)
      .update({ pay_provider: 'provider', status: 2, block_transaction_id: 'P-123' })
    const response = await client.get(`/pay/payment-progress/${order.tradeId}`)
    assert.deepEqual(response.body().data.payment, { reference: 'P-123', explorer_url: '' })
  })
})
