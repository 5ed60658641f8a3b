import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import Token from '#models/token'
import { rpcFor } from '#chains/chain_rpc'
import type { ScanResult } from '#chains/chain_family'
import { TronFamily } from '#plugins/tron/tron_family'
import { Decimal, fromBaseUnits } from '#support/text/money'
import { resetDatabase } from '#tests/helpers/database'
import { FakeTronGrid, type LedgerEntry } from '#tests/helpers/tron/fake_trongrid'
import { hexOf, newTronAccount } from '#tests/helpers/tron/tron_transactions'
import {
  USDC_CONTRACT,
  USDT_CONTRACT,
  baseUnits,
  newTronOrder,
  prepareTronNetwork,
  type TronTestNetwork,
} from '#tests/helpers/tron/tron_network'
import { scanOnce } from '#tests/helpers/scanning'

/**
 * The TRON family's part of the balance watch: every run says which
 * incoming amounts it saw (at their block time), and when asked it reads
 * each watched balance at the solid head, holds the reading until the
 * listings have covered the look-back past it, and gives it as of that
 * block's time. End to end, the core then records a rise nobody listed.
 */

/** 3-second blocks, as on mainnet: the look-back (30 min) is 600 of them. */
const BLOCK_MS = 3000
const LOOKBACK_BLOCKS = 601
/** Blocks for a block to be solidified (the fake's solid lag). */
const SOLID = 19

/** One run of the family itself (no core), carrying its cursor like the core does (through JSON). */
class FamilyRunner {
  cursor: unknown = null

  constructor(private readonly wallet: () => string) {}

  async scan(
    options: {
      readBalances?: boolean
      isDust?: (contract: string | null, amount: string) => boolean
    } = {}
  ) {
    const chain = await Chain.findByOrFail('network', 'tron')
    const tokens = await Token.query().where('network', 'tron').where('enabled', true)
    const result: ScanResult = await new TronFamily().scan({
      chain,
      tokens,
      addresses: [this.wallet()],
      cursor: this.cursor,
      startTime: Date.now() - 60_000,
      rpc: await rpcFor(chain),
      maxBlocksPerScan: 100,
      readBalances: options.readBalances ?? false,
      isDust: options.isDust,
    })
    this.cursor = JSON.parse(JSON.stringify(result.cursor))
    return result
  }

  get held(): { height: number; span: [number, number] } | null {
    return (
      (this.cursor as { balances?: { height: number; span: [number, number] } | null })?.balances ??
      null
    )
  }
}

function balanceReads(fake: FakeTronGrid) {
  return [...fake.requestsTo('getaccount'), ...fake.requestsTo('triggerconstantcontract')]
}

test.group('TRON balance watch: what the family reports', (group) => {
  const fake = new FakeTronGrid()
  let network: TronTestNetwork
  let runner: FamilyRunner
  const contract = newTronAccount().address

  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    network = await prepareTronNetwork(fake)
    runner = new FamilyRunner(() => network.wallet)
  })

  test('seen: each successful incoming transfer of a solidified block, at its block time, dust and not yet deep ones included', async ({
    assert,
  }) => {
    await db.from('chains').where('network', 'tron').update({ confirmations: 40 })
    await runner.scan()
    const usdt = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 13_800_000n,
    })
    const trx = fake.payTrx({ from: network.payer, to: network.wallet, sun: 50_000_000n })
    const internal = fake.callContract({
      from: network.payer,
      contract,
      internals: [{ to: network.wallet, sun: 3_500_000n }],
    })
    const dust = fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 1n,
    })
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 9_000_000n,
      fail: true,
    })
    fake.payTrx({ from: network.payer, to: network.wallet, sun: 9_000_000n, fail: true })
    fake.mine(SOLID, BLOCK_MS)
    // Solidified above, not below: in a block the solid head has not reached.
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 2_000_000n,
    })

    const result = await runner.scan({
      isDust: (_contract, amount) => new Decimal(amount).lt('0.01'),
    })
    assert.lengthOf(result.transfers, 0, 'solidified, not 40 blocks deep: not paid yet')
    assert.equal(result.dust, 1)
    const at = (entry: LedgerEntry) => String(entry.timestamp)
    assert.sameDeepMembers(result.seen!, [
      {
        reference: usdt.txid,
        position: 'log:0',
        to: network.wallet,
        contract: USDT_CONTRACT,
        amount: '13.8',
        height: at(usdt),
      },
      {
        reference: trx.txid,
        position: 'value',
        to: network.wallet,
        contract: null,
        amount: '50',
        height: at(trx),
      },
      {
        reference: internal.txid,
        position: 'internal:0',
        to: network.wallet,
        contract: null,
        amount: '3.5',
        height: at(internal),
      },
      // Dust gets no receipt: named by its place among the transaction's rows.
      {
        reference: dust.txid,
        position: 'trc20:1#0',
        to: network.wallet,
        contract: USDT_CONTRACT,
        amount: '0.000001',
        height: at(dust),
      },
    ])
  })

  test('balances: read at the solid head, held until the look-back has passed over it, then given as of its block time', async ({
    assert,
  }) => {
    fake.fund(network.wallet, null, 5_000_000n)
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 13_800_000n,
    })
    // Solidified, and more than three blocks below the solid head: clear of the reading's span.
    fake.mine(SOLID + 4, BLOCK_MS)
    await runner.scan()

    fake.requests = []
    const reading = fake.solidHead
    const first = await runner.scan({ readBalances: true })
    assert.isUndefined(first.balances, 'held, not given yet')
    assert.equal(runner.held?.height, reading.timestamp)
    const reads = balanceReads(fake)
    assert.lengthOf(reads, 3, 'one read per address and token')
    for (const request of reads) assert.match(request.path, /^\/walletsolidity\//)
    const constantCalls = fake
      .requestsTo('triggerconstantcontract')
      .map((request) => JSON.parse(request.body))
    assert.sameMembers(
      constantCalls.map((body) => body.contract_address),
      [hexOf(USDT_CONTRACT), hexOf(USDC_CONTRACT)]
    )
    for (const body of constantCalls)
      assert.equal(body.owner_address, body.contract_address, 'called as the contract itself')
    assert.equal(
      fake.requestsTo('getblock').filter((request) => request.path.startsWith('/walletsolidity'))
        .length,
      3
    )

    // More arrives after the reading: not in it. Then the solid head moves
    // to 1 ms short of 30 minutes past the reading (599 blocks of 3 s and the payment's, 1 ms after).
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 1_000_000n,
    })
    fake.mine(599, BLOCK_MS)
    fake.requests = []
    const early = await runner.scan({ readBalances: true })
    assert.isUndefined(early.balances, 'the look-back has not passed over it yet')
    assert.lengthOf(balanceReads(fake), 0, 'no second reading while one is held')

    fake.mine(1, BLOCK_MS)
    const given = await runner.scan({ readBalances: true })
    assert.equal(given.balances?.height, String(reading.timestamp))
    assert.sameDeepMembers(given.balances!.readings, [
      { address: network.wallet, contract: USDT_CONTRACT, amount: '13.8' },
      { address: network.wallet, contract: USDC_CONTRACT, amount: '0' },
      { address: network.wallet, contract: null, amount: '5' },
    ])
    assert.isNull(runner.held)
  })

  test('a transfer at the solid head when the reading is due: no read this run (a backend a block behind would miss it)', async ({
    assert,
  }) => {
    // TronGrid's balancer: balance answers from a node two blocks behind the solid head the block read gave.
    fake.staleBalanceBlocks = 2
    await runner.scan()
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 13_800_000n,
    })
    fake.mine(SOLID, BLOCK_MS)
    fake.requests = []
    await runner.scan({ readBalances: true })
    assert.isNull(runner.held)
    assert.lengthOf(balanceReads(fake), 0, 'nothing spent on a reading that could not hold')
    assert.lengthOf(
      fake.requestsTo('getblock').filter((request) => request.path.startsWith('/walletsolidity')),
      1,
      "the run's own solid head read only"
    )

    // Three blocks later every backend has it: read, and it is in the reading.
    fake.mine(3, BLOCK_MS)
    await runner.scan({ readBalances: true })
    assert.equal(runner.held?.height, fake.solidHead.timestamp)
    fake.mine(LOOKBACK_BLOCKS, BLOCK_MS)
    const given = await runner.scan({ readBalances: true })
    assert.equal(
      given.balances?.readings.find((entry) => entry.contract === USDT_CONTRACT)?.amount,
      '13.8'
    )
  })

  test('a transfer solidified while the balances were read, listed afterwards, voids the held reading; the next due run reads again', async ({
    assert,
  }) => {
    await runner.scan()
    let landed: LedgerEntry | null = null
    fake.onBalanceRead = () => {
      fake.onBalanceRead = null
      landed = fake.payTrc20({
        from: network.payer,
        to: network.wallet,
        contract: USDT_CONTRACT,
        amount: 13_800_000n,
      })
      fake.mine(SOLID, BLOCK_MS)
    }
    await runner.scan({ readBalances: true })
    assert.isNotNull(landed)
    const held = runner.held
    assert.isNotNull(held, 'the transfer was not listed when the reading was taken')
    assert.isAbove(landed!.timestamp, held!.span[0])
    assert.isAtMost(landed!.timestamp, held!.span[1])

    // The next run lists it, inside the reading's span: the reading is void.
    const next = await runner.scan({ readBalances: true })
    assert.isUndefined(next.balances)
    assert.isNull(runner.held)
    fake.mine(3, BLOCK_MS)
    fake.requests = []
    await runner.scan({ readBalances: true })
    assert.lengthOf(balanceReads(fake), 3)
    assert.isNotNull(runner.held)
  })
})

test.group('TRON balance watch: end to end with the core', (group) => {
  const fake = new FakeTronGrid()
  let network: TronTestNetwork
  const contract = newTronAccount().address

  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    network = await prepareTronNetwork(fake)
  })

  /** A reading through the core (made due): taken, and held by the family. */
  async function takeReading() {
    await db.from('balance_readings').update({ read_at: 0 })
    await scanOnce('tron')
  }

  /** The held reading given to the core, once the solid head has moved the look-back past it. */
  async function giveReading() {
    fake.mine(LOOKBACK_BLOCKS + SOLID, BLOCK_MS)
    await scanOnce('tron')
  }

  async function unexplained() {
    return db.from('unmatched_payments').where('kind', 'unexplained').orderBy('token')
  }

  test('payments the index lists explain the rise: nothing is recorded', async ({
    client,
    assert,
  }) => {
    // The baseline is read before the payments (and the chain's clock runs ahead of the orders' lives only after).
    await takeReading()
    const usdt = await newTronOrder(client)
    const trx = await newTronOrder(client, { token: 'trx' })
    fake.payTrc20Batch({
      from: network.payer,
      contract: USDT_CONTRACT,
      transfers: [
        { to: network.wallet, amount: baseUnits(usdt.actualAmount) },
        { to: network.wallet, amount: 1n },
      ],
    })
    fake.callContract({
      from: network.payer,
      contract,
      internals: [{ to: network.wallet, sun: baseUnits(trx.actualAmount) }],
    })
    fake.mine(SOLID + 4, BLOCK_MS)
    assert.equal((await scanOnce('tron')).paid, 2)
    assert.equal((await Order.findOrFail(usdt.id)).status, 2)
    assert.equal((await Order.findOrFail(trx.id)).status, 2)
    await giveReading()
    const baseline = await db.from('balance_readings').where('address', network.wallet)
    assert.lengthOf(baseline, 3, 'the baseline: each token of the wallet')
    for (const row of baseline) assert.equal(new Decimal(row.amount).toFixed(), '0')

    await takeReading()
    await giveReading()
    const readings = await db.from('balance_readings').where('address', network.wallet)
    const amountOf = (contractKey: string) =>
      new Decimal(readings.find((row) => row.contract === contractKey)?.amount).toFixed()
    assert.equal(amountOf(USDT_CONTRACT), new Decimal(usdt.actualAmount).plus('0.000001').toFixed())
    assert.equal(amountOf(''), new Decimal(trx.actualAmount).toFixed())
    assert.lengthOf(await unexplained(), 0)
  })

  test('a TRC-20 transfer and contract TRX the index never lists are recorded as unexplained after two readings', async ({
    client,
    assert,
  }) => {
    await takeReading()
    const order = await newTronOrder(client)
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: baseUnits(order.actualAmount),
    })
    // TronGrid's index leaves these out, for good.
    fake.payTrc20({
      from: network.payer,
      to: network.wallet,
      contract: USDT_CONTRACT,
      amount: 7_000_000n,
      indexed: false,
    })
    fake.callContract({
      from: network.payer,
      contract,
      internals: [{ to: network.wallet, sun: 3_500_000n }],
      indexed: false,
    })
    fake.mine(SOLID + 4, BLOCK_MS)
    assert.equal((await scanOnce('tron')).paid, 1)
    await giveReading()
    assert.lengthOf(await unexplained(), 0, 'one reading is only a baseline')

    await takeReading()
    await giveReading()
    const rows = await unexplained()
    assert.deepEqual(
      rows.map((row) => [row.token, row.amount, row.to_address]),
      [
        ['TRX', '3.5', network.wallet],
        ['USDT', '7', network.wallet],
      ]
    )
    assert.match(rows[1].reason, /the transfers seen explain 13\.8/)
    assert.equal(
      fromBaseUnits(fake.balanceAt(network.wallet, USDT_CONTRACT, fake.solidHead.number), 6),
      '20.8'
    )
  })
})
