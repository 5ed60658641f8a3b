import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Token from '#models/token'
import Order from '#models/order'
import { rpcFor } from '#chains/chain_rpc'
import type { ScanContext, ScanResult } from '#chains/chain_family'
import { SolanaFamily } from '#plugins/solana/solana_family'
import { Decimal, fromBaseUnits } from '#support/text/money'
import { resetDatabase } from '#tests/helpers/database'
import { scanOnce } from '#tests/helpers/scanning'
import { SolanaRpcServer } from '#tests/helpers/solana/solana_rpc_server'
import {
  SOLANA,
  lamportsOf,
  prepareSolana,
  solanaOrder,
  usdtUnits,
  type SolanaFixture,
} from '#tests/helpers/solana/solana_setup'

const scanSolana = () => scanOnce(SOLANA)

/** The family's scan as the core calls it, the balance watch due unless told otherwise. */
async function familyContext(
  fixture: SolanaFixture,
  overrides: Partial<ScanContext> = {}
): Promise<ScanContext> {
  const chain = await Chain.findByOrFail('network', SOLANA)
  return {
    chain,
    tokens: await Token.query().where('network', SOLANA).where('enabled', true),
    addresses: [fixture.wallet.address],
    cursor: null,
    startTime: Date.now() - 60_000,
    rpc: await rpcFor(chain),
    maxBlocksPerScan: 1000,
    readBalances: true,
    ...overrides,
  }
}

function lamportsNow(fixture: SolanaFixture, slot = fixture.chain.finalizedSlot) {
  return fromBaseUnits(fixture.chain.lamportsAt(fixture.wallet.address, slot), 9)
}

function reading(result: ScanResult, contract: string | null) {
  return result.balances?.readings.find((entry) => entry.contract === contract)?.amount
}

/** Makes the core's balance watch due again (as if chains.balance_check_minutes had passed). */
async function makeDue() {
  await db.from('balance_readings').update({ read_at: 0 })
}

async function unexplained() {
  return db.from('unmatched_payments').where('kind', 'unexplained').orderBy('id')
}

test.group('Solana: balance watch (seen amounts and balance readings)', (group) => {
  const server = new SolanaRpcServer()
  const lagging = new SolanaRpcServer()
  group.setup(async () => {
    await server.start()
    await lagging.start()
    return async () => {
      await lagging.stop()
      await server.stop()
    }
  })
  group.each.setup(() => resetDatabase())

  test('every incoming amount is seen with its slot and position, dust included; balances are read as of one slot, a token summed over the wallet’s accounts', async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const other = await fixture.chain.createOtherTokenAccount(fixture.wallet.address, fixture.usdt)
    const toAssociated = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )
    const toOther = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('2.5'),
      {
        toAccount: other,
      }
    )
    const sol = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.1')
    )
    const dust = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      1n
    )
    const both = await fixture.chain.paySols(fixture.customer, [
      { to: fixture.wallet.address, amount: lamportsOf('0.01') },
      { to: fixture.wallet.address, amount: lamportsOf('0.02') },
    ])
    const failed = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('999999999')
    )
    assert.isNotNull(failed.err)

    server.calls = []
    const context = await familyContext(fixture, {
      isDust: (_contract, amount) => new Decimal(amount).lt('0.01'),
    })
    const result = await new SolanaFamily().scan(context)
    assert.equal(result.dust, 1)
    assert.lengthOf(result.transfers, 5)
    const entry = (
      record: { signature: string; slot: number },
      position: string,
      contract: string | null,
      amount: string
    ) => ({
      reference: record.signature,
      position,
      to: fixture.wallet.address,
      contract,
      amount,
      height: String(record.slot),
    })
    assert.sameDeepMembers(result.seen!, [
      entry(toAssociated, 'ix:0', fixture.usdt, '13.8'),
      entry(toOther, 'ix:0', fixture.usdt, '2.5'),
      entry(sol, 'ix:0', null, '0.1'),
      entry(dust, 'ix:0', fixture.usdt, '0.000001'),
      entry(both, 'ix:0', null, '0.01'),
      entry(both, 'ix:1', null, '0.02'),
    ])

    assert.equal(result.balances?.height, String(fixture.chain.finalizedSlot))
    assert.sameDeepMembers(result.balances!.readings, [
      { address: fixture.wallet.address, contract: null, amount: lamportsNow(fixture) },
      { address: fixture.wallet.address, contract: fixture.usdt, amount: '16.300001' },
    ])
    // the seeded USDC mint does not exist on this chain: nothing to read, nothing asked
    assert.isUndefined(reading(result, 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'))
    // cost of the reading: one getBalance per wallet, one getTokenAccountsByOwner per wallet and mint (the lists come with it)
    assert.equal(server.count('getBalance'), 1)
    assert.equal(server.count('getTokenAccountsByOwner'), 1)
    // @solana/kit leaves out `finalized`, the node's default
    const commitment =
      (server.calls.find((call) => call.method === 'getBalance')!.params[1] as any)?.commitment ??
      'finalized'
    assert.equal(commitment, 'finalized', 'read at the commitment the scan pays at')
    // every listing of the run had to reach the reading's slot
    const listings = server.calls.filter(
      (call) =>
        call.method === 'getSignaturesForAddress' &&
        ((call.params[1] as any)?.commitment ?? 'finalized') === 'finalized'
    )
    assert.isAbove(listings.length, 0)
    assert.isTrue(
      listings.every(
        (call) => (call.params[1] as any).minContextSlot === fixture.chain.finalizedSlot
      )
    )

    // not asked: nothing read, the amounts seen still reported
    server.calls = []
    const later = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.3')
    )
    const next = await new SolanaFamily().scan({
      ...context,
      cursor: result.cursor,
      readBalances: false,
    })
    assert.isUndefined(next.balances)
    assert.deepEqual(next.seen, [entry(later, 'ix:0', null, '0.3')])
    assert.equal(server.count('getBalance'), 0)
    assert.equal(server.count('getTokenAccountsByOwner'), 0)
  })

  test('at finality: a transfer only confirmed is neither seen nor in the balance; once finalized it is both', async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server, { confirmations: 32 })
    const context = await familyContext(fixture)
    const first = await new SolanaFamily().scan(context)
    fixture.chain.holdFinality()
    const before = lamportsNow(fixture)
    const payment = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.1')
    )

    const held = await new SolanaFamily().scan({ ...context, cursor: first.cursor })
    assert.deepEqual(held.seen, [])
    assert.equal(held.balances?.height, String(payment.slot - 1))
    assert.equal(reading(held, null), before)
    assert.lengthOf(held.unconfirmed ?? [], 1, 'the payer’s page still says "seen, confirming"')

    fixture.chain.finalize()
    const final = await new SolanaFamily().scan({ ...context, cursor: held.cursor })
    assert.deepEqual(
      final.seen!.map((entry) => [entry.reference, entry.amount, entry.height]),
      [[payment.signature, '0.1', String(payment.slot)]]
    )
    assert.equal(final.balances?.height, String(payment.slot))
    assert.equal(reading(final, null), new Decimal(before).plus('0.1').toFixed())
  })

  test('no reading from a run that is not caught up, nor from one that resumes a half-read window; the amounts seen are reported all the same', async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    for (let amount = 1; amount <= 3; amount++) {
      await fixture.chain.payToken(
        fixture.customer,
        fixture.wallet.address,
        fixture.usdt,
        usdtUnits(String(amount))
      )
    }
    // the USDT account lists four signatures (its creation, three payments): three a run
    const family = new SolanaFamily({ pageSize: 2, maxSignaturesPerAccount: 3 })
    const context = await familyContext(fixture)

    const bounded = await family.scan(context)
    assert.isFalse(bounded.caughtUp)
    assert.isUndefined(bounded.balances)
    assert.deepEqual(
      bounded.seen!.map((entry) => entry.amount),
      ['3', '2', '1']
    )

    server.calls = []
    const resumed = await family.scan({
      ...context,
      cursor: JSON.parse(JSON.stringify(bounded.cursor)),
    })
    assert.isTrue(resumed.caughtUp)
    assert.isUndefined(resumed.balances, 'what is newer than the window was not listed this run')
    assert.equal(server.count('getBalance'), 0, 'so nothing is read')
    const late = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('4')
    )

    const caughtUp = await family.scan({
      ...context,
      cursor: JSON.parse(JSON.stringify(resumed.cursor)),
    })
    assert.deepEqual(
      caughtUp.seen!.map((entry) => [entry.reference, entry.amount]),
      [[late.signature, '4']]
    )
    assert.equal(reading(caughtUp, fixture.usdt), '10')
  })

  test('a listing node behind the balance reading (minContextSlot refused): the scan lists anyway and reports no reading', async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const context = await familyContext(fixture)
    const first = await new SolanaFamily().scan(context)
    const older = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.1')
    )
    const newer = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.2')
    )
    // the listings come from a node one slot behind the one answering balances
    server.listingLag = 1

    server.calls = []
    const behind = await new SolanaFamily().scan({ ...context, cursor: first.cursor })
    assert.isUndefined(behind.balances)
    assert.isUndefined(behind.interrupted)
    assert.deepEqual(
      behind.transfers.map((transfer) => transfer.reference),
      [older.signature],
      'listed without the floor: what the lagging node has'
    )
    const asked: (number | undefined)[] = server.calls
      .filter((call) => call.method === 'getSignaturesForAddress')
      .map((call) => (call.params[1] as any)?.minContextSlot)
    assert.isTrue(asked.includes(newer.slot), 'asked to reach the reading first')
    assert.isTrue(asked.includes(undefined), 'then without')

    server.listingLag = 0
    const caughtUp = await new SolanaFamily().scan({ ...context, cursor: behind.cursor })
    assert.deepEqual(
      caughtUp.transfers.map((transfer) => transfer.reference),
      [newer.signature]
    )
    assert.equal(caughtUp.balances?.height, String(newer.slot))
  })

  test('a balance node behind what the scan already processed is refused (minContextSlot): no reading rather than an old one', async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const context = await familyContext(fixture)
    const payment = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.1')
    )
    const first = await new SolanaFamily().scan({ ...context, readBalances: false })
    assert.lengthOf(first.transfers, 1)

    // the balances now come from a node one slot behind: it does not have the payment yet
    server.balanceLag = 1
    server.calls = []
    const behind = await new SolanaFamily().scan({ ...context, cursor: first.cursor })
    assert.isUndefined(behind.balances)
    assert.equal(
      (server.calls.find((call) => call.method === 'getBalance')!.params[1] as any).minContextSlot,
      payment.slot
    )

    server.balanceLag = 0
    const caughtUp = await new SolanaFamily().scan({ ...context, cursor: behind.cursor })
    assert.equal(caughtUp.balances?.height, String(payment.slot))
    assert.equal(reading(caughtUp, null), lamportsNow(fixture))
  })

  test('with a second endpoint, a listing refused by a node behind the reading is asked there, and the reading stands', async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server, { rpcUrls: [lagging.url, server.url] })
    lagging.serve(fixture.chain)
    lagging.listingLag = 1
    const payment = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.1')
    )

    const result = await new SolanaFamily().scan(await familyContext(fixture))
    assert.deepEqual(
      result.transfers.map((transfer) => transfer.reference),
      [payment.signature]
    )
    assert.equal(result.balances?.height, String(payment.slot))
    assert.equal(reading(result, null), lamportsNow(fixture))
    assert.isAbove(lagging.count('getBalance'), 0, 'the reading came from the first endpoint')
    const refused = lagging.calls.filter((call) => call.method === 'getSignaturesForAddress')
    assert.lengthOf(refused, 1, 'refused once, then the other endpoint is asked first')
    assert.isAbove(server.count('getSignaturesForAddress'), 0)
  })

  test('a payment landing between two balance reads is in the reading as of its height: no unexplained amount later', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'sol')
    let payment: { signature: string; slot: number } | null = null
    // after the SOL balance is read, before the USDT accounts are: the payment lands in between
    server.beforeAnswer = async (method) => {
      if (method !== 'getTokenAccountsByOwner' || payment) return
      payment = await fixture.chain.paySol(
        fixture.customer,
        fixture.wallet.address,
        lamportsOf(order.actualAmount)
      )
    }
    const report = await scanSolana()
    assert.equal(report.paid, 1)
    assert.isNotNull(payment)
    const stored = await db.from('balance_readings').where('contract', '').first()
    assert.equal(stored.height, String(payment!.slot))
    assert.equal(
      stored.amount,
      lamportsNow(fixture),
      'the SOL read before the payment, plus the payment'
    )

    server.beforeAnswer = null
    await makeDue()
    await scanSolana()
    assert.lengthOf(await unexplained(), 0)
  })

  test('end to end: SOL and USDT the scan cannot see are unexplained after two readings; payments and dust it saw are not', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    await scanSolana() // the first reading: the baseline
    assert.equal(Number((await db.from('balance_readings').count('* as total').first()).total), 2)

    // seen: a payment, dust, a transfer that pays nothing
    const order = await solanaOrder(client, 'sol')
    await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf(order.actualAmount)
    )
    await fixture.chain.payToken(fixture.customer, fixture.wallet.address, fixture.usdt, 1n)
    await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('3')
    )
    await makeDue()
    assert.equal((await scanSolana()).paid, 1)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.lengthOf(await unexplained(), 0)

    // unseen: an index that skipped two transactions
    const hiddenSol = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.5')
    )
    const hiddenUsdt = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('7')
    )
    server.unlisted.add(hiddenSol.signature)
    server.unlisted.add(hiddenUsdt.signature)
    await scanSolana()
    assert.lengthOf(await unexplained(), 0, 'not due: no reading, nothing compared')
    await makeDue()
    const report = await scanSolana()
    assert.equal(report.transfers, 0)
    const rows = await unexplained()
    assert.sameDeepMembers(
      rows.map((row) => [row.to_address, row.token, row.amount]),
      [
        [fixture.wallet.address, 'SOL', '0.5'],
        [fixture.wallet.address, 'USDT', '7'],
      ]
    )
    assert.match(rows[0].reason, /unexplained incoming amount/)
  })
})
