import { test } from '@japa/runner'
import { randomBytes } from 'node:crypto'
import { getBase58Decoder } from '@solana/kit'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import Chain from '#models/chain'
import Token from '#models/token'
import UnmatchedPayment from '#models/unmatched_payment'
import callbackDeliverer from '#callbacks/callback_deliverer'
import chainRegistry from '#chains/chain_registry'
import { rpcFor } from '#chains/chain_rpc'
import { RpcPool } from '#chains/rpc_pool'
import { SolanaFamily } from '#plugins/solana/solana_family'
import type { AccountCursor, SolanaCursor } from '#plugins/solana/solana_scan'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { merchantVerifiesCallback } from '#tests/helpers/merchant'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { CLOSED_URL, runAce } from '#tests/helpers/processes'
import { SolanaRpcServer } from '#tests/helpers/solana/solana_rpc_server'
import { jsonParsedTransaction } from '#tests/helpers/solana/json_parsed_view'
import {
  SOLANA,
  lamportsOf,
  prepareSolana,
  solanaOrder,
  usdtUnits,
  type SolanaFixture,
} from '#tests/helpers/solana/solana_setup'
import { scanOnce } from '#tests/helpers/scanning'

const scanSolana = () => scanOnce(SOLANA)

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

async function statusOf(order: Order) {
  return (await Order.findOrFail(order.id)).status
}

/** A customer with 1 SOL and only 1 USDT: paying 13.8 USDT fails on chain. */
async function poorCustomer(fixture: SolanaFixture) {
  const poor = await fixture.chain.newWallet(1_000_000_000n)
  await fixture.chain.mintTo(poor.address, fixture.usdt, 1_000_000n)
  return poor
}

test.group('Solana: payments end to end', (group) => {
  const server = new SolanaRpcServer()
  const merchant = new MerchantServer()
  group.setup(async () => {
    await server.start()
    await merchant.start()
    return async () => {
      await merchant.stop()
      await server.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    merchant.reset()
  })

  test('USDT (transferChecked) pays the order and the merchant gets a signed callback', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt', { notify_url: merchant.notifyUrl })
    assert.equal(order.actualAmount, '13.8')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )

    const report = await scanSolana()
    assert.equal(report.paid, 1)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, payment.signature)

    assert.equal((await callbackDeliverer.runOnce()).delivered, 1)
    assert.lengthOf(merchant.requests, 1)
    const body = JSON.parse(merchant.requests[0].body)
    assert.isTrue(merchantVerifiesCallback(body))
    assert.deepInclude(body, {
      trade_id: order.tradeId,
      token: 'USDT',
      actual_amount: 13.8,
      receive_address: fixture.wallet.address,
      block_transaction_id: payment.signature,
      status: 2,
    })
  })

  test('SOL (system transfer) pays the order, scanned by `chains:scan` in another process', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'sol', { notify_url: merchant.notifyUrl })
    assert.equal(order.actualAmount, '0.1')
    const payment = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.1')
    )

    const result = await runAce(['chains:scan', '--network', SOLANA])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    assert.match(result.stdout, /solana: 1 transfer\(s\), 1 paid, 0 unmatched/)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, payment.signature)

    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 1)
    const body = JSON.parse(merchant.requests[0].body)
    assert.isTrue(merchantVerifiesCallback(body))
    assert.deepInclude(body, {
      token: 'SOL',
      actual_amount: 0.1,
      block_transaction_id: payment.signature,
      status: 2,
    })
  })

  test('a plain `transfer` (no mint in the instruction) is resolved through the token balances', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8'),
      {
        checked: false,
      }
    )
    const served = jsonParsedTransaction(payment).transaction.message.instructions[0] as any
    assert.equal(served.parsed.type, 'transfer')
    assert.notProperty(served.parsed.info, 'mint')

    await scanSolana()
    assert.equal(await statusOf(order), 2)
  })

  test('a failed transaction pays nothing and is not recorded', async ({ client, assert }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    const failed = await fixture.chain.payToken(
      await poorCustomer(fixture),
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )
    assert.isNotNull(failed.err)

    const report = await scanSolana()
    assert.equal(report.transfers, 0)
    assert.equal(await statusOf(order), 1)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('a transfer made by a program (inner transferChecked of RecoverNested) is found', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    const otherMint = await fixture.chain.createMint(0)
    const recovery = await fixture.chain.payNestedAndRecover(
      fixture.customer,
      fixture.wallet,
      otherMint,
      fixture.usdt,
      usdtUnits('13.8')
    )
    assert.isNull(recovery.err)
    const view = jsonParsedTransaction(recovery)
    assert.deepEqual(
      view.transaction.message.instructions.map((instruction: any) => instruction.parsed?.type),
      ['recoverNested']
    )
    const inner = view.meta.innerInstructions.flatMap((entry) => entry.instructions) as any[]
    assert.isTrue(inner.some((instruction) => instruction.parsed?.type === 'transferChecked'))

    await scanSolana()
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, recovery.signature)
  })

  test('payment URI: Solana Pay with spl-token for USDT, plain for SOL', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const usdtOrder = await solanaOrder(client, 'usdt')
    const solOrder = await solanaOrder(client, 'sol')
    const usdtUri = (await client.get(`/pay/payment-uri/${usdtOrder.tradeId}`)).body().data.uri
    const solUri = (await client.get(`/pay/payment-uri/${solOrder.tradeId}`)).body().data.uri
    assert.equal(usdtUri, `solana:${fixture.wallet.address}?amount=13.8&spl-token=${fixture.usdt}`)
    assert.equal(solUri, `solana:${fixture.wallet.address}?amount=0.1`)
  })
})

test.group('Solana: commitment', (group) => {
  const server = new SolanaRpcServer()
  group.setup(async () => {
    await server.start()
    return () => server.stop()
  })
  group.each.setup(() => resetDatabase())

  test('confirmations 32: a confirmed but not finalized transfer waits for finality', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server, { confirmations: 32 })
    const order = await solanaOrder(client, 'usdt')
    fixture.chain.holdFinality()
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )

    assert.equal((await scanSolana()).transfers, 0)
    assert.equal(await statusOf(order), 1)
    const refused = await submit(client, order.tradeId, payment.signature)
    assert.match(refused.body().message, /not yet confirmed \(1 of 32 confirmations\)/)

    fixture.chain.finalize()
    assert.equal((await scanSolana()).paid, 1)
    assert.equal(await statusOf(order), 2)
    const chain = await Chain.findByOrFail('network', SOLANA)
    const transfers = await chainRegistry.family('solana').verifyReference!(payment.signature, {
      chain,
      tokens: await Token.query().where('network', SOLANA),
      order,
      rpc: await rpcFor(chain),
    })
    assert.equal(transfers[0].confirmations, 32)
  })

  test('confirmations 1: a confirmed transfer is credited at once, with 1 confirmation', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server, { confirmations: 1 })
    const order = await solanaOrder(client, 'usdt')
    fixture.chain.holdFinality()
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )

    const chain = await Chain.findByOrFail('network', SOLANA)
    const tokens = await Token.query().where('network', SOLANA)
    const transfers = await chainRegistry.family('solana').verifyReference!(payment.signature, {
      chain,
      tokens,
      order,
      rpc: await rpcFor(chain),
    })
    assert.deepEqual(
      transfers.map((transfer) => [
        transfer.to,
        transfer.contract,
        transfer.amount,
        transfer.confirmations,
        transfer.success,
      ]),
      [[fixture.wallet.address, fixture.usdt, '13.8', 1, true]]
    )
    assert.equal((await scanSolana()).paid, 1)
    assert.equal(await statusOf(order), 2)
  })

  test('a transaction only processed (not confirmed) is neither found nor credited', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server, { confirmations: 1 })
    const order = await solanaOrder(client, 'usdt')
    fixture.chain.holdConfirmation()
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )

    assert.match(
      (await submit(client, order.tradeId, payment.signature)).body().message,
      /not found/
    )
    assert.equal((await scanSolana()).transfers, 0)
    fixture.chain.finalize()
    assert.equal((await scanSolana()).paid, 1)
  })
})

test.group('Solana: submit-tx-hash', (group) => {
  const server = new SolanaRpcServer()
  group.setup(async () => {
    await server.start()
    return () => server.stop()
  })
  group.each.setup(() => resetDatabase())

  test('a verified signature pays the order', async ({ client, assert }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )
    const response = await submit(client, order.tradeId, ` ${payment.signature} `)
    response.assertStatus(200)
    assert.deepEqual(response.body().data, {
      trade_id: order.tradeId,
      block_transaction_id: payment.signature,
      status: 2,
    })
    assert.equal(await countRows('callbacks'), 1)
  })

  test('a verified SOL signature pays a SOL order', async ({ client, assert }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'sol')
    const payment = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf('0.1')
    )
    const response = await submit(client, order.tradeId, payment.signature)
    assert.equal(response.body().data?.status, 2, JSON.stringify(response.body()))
  })

  const refusals: [
    string,
    (fixture: SolanaFixture) => Promise<string>,
    (fixture: SolanaFixture) => RegExp,
  ][] = [
    [
      'an unknown signature',
      async () => getBase58Decoder().decode(randomBytes(64)),
      () => /not found/,
    ],
    ['a malformed reference', async () => '0xabc123', () => /not a Solana transaction signature/],
    [
      'a failed transaction',
      async (f) =>
        (await f.chain.payToken(await poorCustomer(f), f.wallet.address, f.usdt, usdtUnits('13.8')))
          .signature,
      () => /failed on chain/,
    ],
    [
      'a payment to another wallet',
      async (f) => {
        const stranger = await f.chain.newWallet()
        return (
          await f.chain.payToken(f.customer, stranger.address, f.usdt, usdtUnits('13.8'), {
            createRecipientAccount: true,
          })
        ).signature
      },
      (f) => new RegExp(`not ${f.wallet.address}`),
    ],
    [
      'another token (SOL for a USDT order)',
      async (f) =>
        (await f.chain.paySol(f.customer, f.wallet.address, lamportsOf('13.8'))).signature,
      () => /does not transfer USDT/,
    ],
    [
      'a wrong amount',
      async (f) =>
        (await f.chain.payToken(f.customer, f.wallet.address, f.usdt, usdtUnits('13.79')))
          .signature,
      () => /transfers 13.79 USDT, the order expects 13.8/,
    ],
    [
      'a transfer not yet finalized',
      async (f) => {
        f.chain.holdFinality()
        return (await f.chain.payToken(f.customer, f.wallet.address, f.usdt, usdtUnits('13.8')))
          .signature
      },
      () => /not yet confirmed \(1 of 32/,
    ],
  ]
  for (const [name, pay, message] of refusals) {
    test(`refuses ${name}`, async ({ client, assert }) => {
      const fixture = await prepareSolana(server)
      const order = await solanaOrder(client, 'usdt')
      const reference = await pay(fixture)
      const response = await submit(client, order.tradeId, reference)
      response.assertStatus(400)
      assert.match(response.body().message, message(fixture))
      assert.equal(await statusOf(order), 1)
    })
  }
})

test.group('Solana: scanning', (group) => {
  const server = new SolanaRpcServer()
  const downServer = new SolanaRpcServer()
  group.setup(async () => {
    await server.start()
    await downServer.start()
    return async () => {
      await downServer.stop()
      await server.stop()
    }
  })
  group.each.setup(() => resetDatabase())

  test('a payment made while the scanner was stopped is found by a new process from the stored cursor', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    await scanSolana()
    const before = await db.from('chain_cursors').where('network', SOLANA).first()
    const walletAccount = await fixture.chain.associatedTokenAccount(
      fixture.wallet.address,
      fixture.usdt
    )
    const stored = JSON.parse(before.cursor) as SolanaCursor
    assert.property(stored.accounts, walletAccount)

    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )
    const result = await runAce(['chains:scan', '--network', SOLANA])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    assert.equal(await statusOf(order), 2)
    const after = JSON.parse(
      (await db.from('chain_cursors').where('network', SOLANA).first()).cursor
    ) as SolanaCursor
    assert.equal(after.accounts[walletAccount].until, payment.signature)
  })

  test('a transfer that matches no order is recorded as unmatched', async ({ client, assert }) => {
    const fixture = await prepareSolana(server)
    await solanaOrder(client, 'usdt')
    // short of the 13.8 asked (an exchange kept a fee), well above dust
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('12.5')
    )
    const report = await scanSolana()
    assert.equal(report.unmatched, 1)
    const rows = await UnmatchedPayment.all()
    assert.deepEqual(
      rows.map((row) => [row.reference, row.toAddress, row.token, row.amount]),
      [[payment.signature, fixture.wallet.address, 'USDT', '12.5']]
    )
  })

  test('one transfer pays once, even when windows overlap', async ({ client, assert }) => {
    const fixture = await prepareSolana(server)
    const first = await solanaOrder(client, 'usdt')
    await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits(first.actualAmount)
    )
    await scanSolana()
    await scanSolana()
    assert.equal(await statusOf(first), 2)

    const second = await solanaOrder(client, 'usdt') // takes the freed amount again
    assert.equal(second.actualAmount, first.actualAmount)
    await db.from('chain_cursors').where('network', SOLANA).update({ cursor: '' }) // rescan from the start
    const report = await scanSolana()
    assert.equal(report.transfers, 1)
    assert.equal(report.paid, 0)
    assert.equal(await statusOf(second), 1)
    assert.equal(await countRows('callbacks'), 1)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('cost: one signature query per watched account and one fetch per new transaction, whatever the orders', async ({
    client,
    assert,
  }) => {
    // the node's default is finalized: @solana/kit leaves it out
    const signatureQueries = (commitment: string) =>
      server.calls.filter(
        (call) =>
          call.method === 'getSignaturesForAddress' &&
          ((call.params[1] as any)?.commitment ?? 'finalized') === commitment
      ).length
    const fixture = await prepareSolana(server)
    const orders: Order[] = []
    for (let index = 0; index < 5; index++) orders.push(await solanaOrder(client, 'usdt'))
    await scanSolana()

    server.calls = []
    await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits(orders[3].actualAmount)
    )
    assert.equal((await scanSolana()).paid, 1)
    // watched: the wallet (SOL), its USDT account, its USDC account; each
    // also asked once for newer `confirmed` signatures (payment sightings)
    assert.equal(signatureQueries('finalized'), 3)
    assert.equal(signatureQueries('confirmed'), 3)
    assert.equal(server.count('getTransaction'), 1)

    server.calls = []
    await scanSolana()
    assert.equal(signatureQueries('finalized'), 3)
    assert.equal(signatureQueries('confirmed'), 3)
    assert.equal(server.count('getTransaction'), 0)
  })

  test('first scan walks back to the start time only; bounded runs resume from the cursor', async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const startTime = Date.now()
    await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('9'),
      {
        blockTime: Math.floor(startTime / 1000) - 3600,
      }
    )
    for (let amount = 1; amount <= 5; amount++) {
      await fixture.chain.payToken(
        fixture.customer,
        fixture.wallet.address,
        fixture.usdt,
        usdtUnits(String(amount))
      )
    }

    const family = new SolanaFamily({ pageSize: 2, maxSignaturesPerAccount: 3 })
    const chain = await Chain.findByOrFail('network', SOLANA)
    const context = {
      chain,
      tokens: await Token.query().where('network', SOLANA).where('enabled', true),
      addresses: [fixture.wallet.address],
      startTime,
      rpc: await rpcFor(chain),
      maxBlocksPerScan: 1000,
    }
    const runs: { amounts: string[]; caughtUp: boolean }[] = []
    let cursor: unknown = null
    for (let run = 0; run < 3; run++) {
      const result = await family.scan({ ...context, cursor })
      runs.push({
        amounts: result.transfers.map((transfer) => transfer.amount),
        caughtUp: result.caughtUp,
      })
      cursor = JSON.parse(JSON.stringify(result.cursor))
    }
    assert.deepEqual(runs, [
      { amounts: ['3', '4', '5'], caughtUp: false },
      { amounts: ['1', '2'], caughtUp: true },
      { amounts: [], caughtUp: true },
    ])

    const later = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('6')
    )
    const result = await family.scan({ ...context, cursor, startTime: Date.now() })
    assert.deepEqual(
      result.transfers.map((transfer) => [
        transfer.reference,
        transfer.amount,
        transfer.to,
        transfer.contract,
      ]),
      [[later.signature, '6', fixture.wallet.address, fixture.usdt]]
    )
    const account = await fixture.chain.associatedTokenAccount(fixture.wallet.address, fixture.usdt)
    assert.equal(
      ((result.cursor as SolanaCursor).accounts[account] as AccountCursor).until,
      later.signature
    )
  })

  test('a transaction the node serves only in a newer version pays nothing; later payments still count', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    const unreadable = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('1')
    )
    server.newerVersion.add(unreadable.signature)
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )

    const report = await scanSolana()
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, payment.signature)
    const other = await solanaOrder(client, 'usdt', { amount: 7.25 })
    assert.match(
      (await submit(client, other.tradeId, unreadable.signature)).body().message,
      /version this gateway cannot read/
    )
  })

  test('RPC failover: a dead endpoint and a failing one are skipped for the next', async ({
    client,
    assert,
  }) => {
    const dead = CLOSED_URL
    downServer.down = true
    downServer.requests = []
    const fixture = await prepareSolana(server, { rpcUrls: [dead, downServer.url, server.url] })
    const order = await solanaOrder(client, 'usdt')
    await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )

    assert.equal((await scanSolana()).paid, 1)
    assert.equal(await statusOf(order), 2)
    assert.isAtLeast(downServer.requests.length, 1)
    assert.isAtLeast(RpcPool.health(dead)!.failures, 1)
    assert.isAtLeast(RpcPool.health(downServer.url)!.failures, 1)

    RpcPool.reset()
    const other = await solanaOrder(client, 'sol')
    const payment = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf(other.actualAmount)
    )
    assert.equal((await submit(client, other.tradeId, payment.signature)).body().data?.status, 2)
  })
})
