import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import { resetDatabase } from '#tests/helpers/database'
import { scanOnce } from '#tests/helpers/scanning'
import { jsonParsedTransaction } from '#tests/helpers/solana/json_parsed_view'
import { SolanaRpcServer } from '#tests/helpers/solana/solana_rpc_server'
import {
  SOLANA,
  lamportsOf,
  prepareSolana,
  solanaOrder,
  usdtUnits,
} from '#tests/helpers/solana/solana_setup'
import { getTransferSolInstruction } from '@solana-program/system'
import { getTransferCheckedInstruction } from '@solana-program/token'

const scanSolana = () => scanOnce(SOLANA)

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

async function references(signature: string) {
  const rows = await db.from('payment_references').where('reference', signature).orderBy('position')
  return rows.map((row) => row.position)
}

/**
 * One transaction, several transfer instructions, several orders: each
 * instruction is a transfer of its own (`ix:0`, `ix:1` …), each pays at
 * most one order, and the transaction's signature is the reference of all.
 */
test.group('Solana: one transaction paying several orders', (group) => {
  const server = new SolanaRpcServer()
  group.setup(async () => {
    await server.start()
    return () => server.stop()
  })
  group.each.setup(() => resetDatabase())

  test('two transferChecked in one transaction pay two orders by scan (ix:0 and ix:1)', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const first = await solanaOrder(client, 'usdt')
    const second = await solanaOrder(client, 'usdt')
    assert.notEqual(first.actualAmount, second.actualAmount)
    const payment = await fixture.chain.payTokens(fixture.customer, fixture.usdt, [
      { toWallet: fixture.wallet.address, amount: usdtUnits(first.actualAmount) },
      { toWallet: fixture.wallet.address, amount: usdtUnits(second.actualAmount) },
    ])
    assert.isNull(payment.err)
    const served = jsonParsedTransaction(payment).transaction.message.instructions as any[]
    assert.deepEqual(
      served.map((instruction) => instruction.parsed?.type),
      ['transferChecked', 'transferChecked']
    )

    const report = await scanSolana()
    assert.equal(report.transfers, 2)
    assert.equal(report.paid, 2)
    for (const order of [first, second]) {
      const paid = await Order.findOrFail(order.id)
      assert.equal(paid.status, 2)
      assert.equal(paid.blockTransactionId, payment.signature)
    }
    assert.deepEqual(await references(payment.signature), ['ix:0', 'ix:1'])
    // read again (a rescan from the start): each transfer still pays once
    await db.from('chain_cursors').where('network', SOLANA).update({ cursor: '' })
    assert.equal((await scanSolana()).paid, 0)
    assert.equal(
      await db
        .from('callbacks')
        .count('* as total')
        .first()
        .then((row) => Number(row.total)),
      2
    )
  })

  test('a SOL and a USDT transfer in one transaction pay a SOL and a USDT order (listed by both watched accounts, read once)', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const solOrder = await solanaOrder(client, 'sol')
    const usdtOrder = await solanaOrder(client, 'usdt')
    const source = await fixture.chain.associatedTokenAccount(
      fixture.customer.address,
      fixture.usdt
    )
    const destination = await fixture.chain.associatedTokenAccount(
      fixture.wallet.address,
      fixture.usdt
    )
    const payment = await fixture.chain.send(
      [
        getTransferSolInstruction({
          source: fixture.customer,
          destination: fixture.wallet.address,
          amount: lamportsOf(solOrder.actualAmount),
        }),
        getTransferCheckedInstruction({
          source,
          mint: fixture.usdt,
          destination,
          authority: fixture.customer,
          amount: usdtUnits(usdtOrder.actualAmount),
          decimals: 6,
        }),
      ],
      { feePayer: fixture.customer }
    )
    assert.isNull(payment.err)

    server.calls = []
    assert.equal((await scanSolana()).paid, 2)
    assert.equal(
      server.calls.filter(
        (call) => call.method === 'getTransaction' && call.params[0] === payment.signature
      ).length,
      1,
      'fetched once although the wallet and its USDT account both list it'
    )
    assert.equal((await Order.findOrFail(solOrder.id)).status, 2)
    assert.equal((await Order.findOrFail(usdtOrder.id)).status, 2)
    assert.deepEqual(await references(payment.signature), ['ix:0', 'ix:1'])
  })

  test('submit-tx-hash of that one signature pays each of the two orders, each with its own transfer', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const first = await solanaOrder(client, 'usdt')
    const second = await solanaOrder(client, 'usdt')
    const payment = await fixture.chain.payTokens(fixture.customer, fixture.usdt, [
      { toWallet: fixture.wallet.address, amount: usdtUnits(first.actualAmount) },
      { toWallet: fixture.wallet.address, amount: usdtUnits(second.actualAmount) },
    ])

    const paidSecond = await submit(client, second.tradeId, payment.signature)
    assert.equal(paidSecond.body().data?.status, 2, JSON.stringify(paidSecond.body()))
    const paidFirst = await submit(client, first.tradeId, payment.signature)
    assert.equal(paidFirst.body().data?.status, 2, JSON.stringify(paidFirst.body()))
    for (const order of [first, second]) {
      assert.equal((await Order.findOrFail(order.id)).blockTransactionId, payment.signature)
    }
    assert.deepEqual(await references(payment.signature), ['ix:0', 'ix:1'])

    // a third order of the first one's (freed) amount cannot take a transfer already used
    const third = await solanaOrder(client, 'usdt')
    assert.equal(third.actualAmount, first.actualAmount)
    const refused = await submit(client, third.tradeId, payment.signature)
    refused.assertStatus(400)
    assert.equal(refused.body().status_code, 10007)
    assert.equal((await Order.findOrFail(third.id)).status, 1)

    // the scan then finds both transfers already paid: nothing paid twice, nothing unmatched
    const report = await scanSolana()
    assert.equal(report.paid, 0)
    assert.equal(report.unmatched, 0)
  })
})
