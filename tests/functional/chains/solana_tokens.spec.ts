import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import { ASSOCIATED_TOKEN_PROGRAM_ADDRESS, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import { TOKEN_2022_PROGRAM_ADDRESS } from '#plugins/solana/solana_programs'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { jsonParsedTransaction } from '#tests/helpers/solana/json_parsed_view'
import { SolanaRpcServer } from '#tests/helpers/solana/solana_rpc_server'
import {
  SOLANA,
  lamportsOf,
  prepareSolana,
  solanaOrder,
  usdtUnits,
} from '#tests/helpers/solana/solana_setup'
import { scanOnce } from '#tests/helpers/scanning'

const scanSolana = () => scanOnce(SOLANA)

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

test.group('Solana: Token-2022, version-0 transactions, unreadable and dust', (group) => {
  const server = new SolanaRpcServer()
  group.setup(async () => {
    await server.start()
    return () => server.stop()
  })
  group.each.setup(() => resetDatabase())

  test('a Token-2022 mint: its associated token account is watched and a transfer pays the order', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const mint = await fixture.chain.createMint(6, { tokenProgram: TOKEN_2022_PROGRAM_ADDRESS })
    assert.equal(fixture.chain.tokenProgramOf(mint), TOKEN_2022_PROGRAM_ADDRESS)
    await fixture.chain.mintTo(fixture.customer.address, mint, 1_000_000_000n)
    await chainAdmin.setToken(SOLANA, 'USDC', { contract: mint, decimals: 6 })
    await rateAdmin.set('USDC', 'CNY', '7.25')
    const order = await solanaOrder(client, 'usdc')
    assert.equal(order.actualAmount, '13.8')
    // the payer's wallet creates the merchant's Token-2022 account in the same transaction
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      mint,
      usdtUnits('13.8'),
      {
        createRecipientAccount: true,
      }
    )
    const served = jsonParsedTransaction(payment)
    assert.isTrue(
      served.transaction.message.instructions.some(
        (instruction: any) => instruction.program === 'spl-token-2022'
      )
    )

    const report = await scanSolana()
    assert.equal(report.paid, 1)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, payment.signature)
    const account = await fixture.chain.associatedTokenAccount(fixture.wallet.address, mint)
    assert.isTrue(
      server.calls.some(
        (call) => call.method === 'getSignaturesForAddress' && call.params[0] === account
      ),
      'the Token-2022 associated account is listed'
    )
  })

  test('a Token-2022 transfer verified by signature (submit-tx-hash) pays the order', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const mint = await fixture.chain.createMint(6, { tokenProgram: TOKEN_2022_PROGRAM_ADDRESS })
    await fixture.chain.mintTo(fixture.customer.address, mint, 1_000_000_000n)
    await fixture.chain.createTokenAccount(fixture.wallet.address, mint)
    await chainAdmin.setToken(SOLANA, 'USDC', { contract: mint, decimals: 6 })
    await rateAdmin.set('USDC', 'CNY', '7.25')
    const order = await solanaOrder(client, 'usdc')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      mint,
      usdtUnits('13.8')
    )
    const response = await submit(client, order.tradeId, payment.signature)
    assert.equal(response.body().data?.status, 2, JSON.stringify(response.body()))
  })

  test('a version-0 transaction loading the accounts from a lookup table pays the order (scan and submit-tx-hash)', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const walletAccount = await fixture.chain.associatedTokenAccount(
      fixture.wallet.address,
      fixture.usdt
    )
    const table = await fixture.chain.createLookupTable([
      walletAccount,
      fixture.usdt,
      TOKEN_PROGRAM_ADDRESS,
      ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
    ])
    const order = await solanaOrder(client, 'usdt')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8'),
      {
        lookupTables: [table],
      }
    )
    assert.isNull(payment.err)
    // as the node serves it: the receiving account only among the loaded addresses
    const served = jsonParsedTransaction(payment)
    assert.include(served.meta.loadedAddresses.writable, walletAccount)
    assert.deepInclude(served.transaction.message.accountKeys, {
      pubkey: walletAccount,
      signer: false,
      writable: true,
      source: 'lookupTable',
    })
    assert.lengthOf(served.transaction.message.addressTableLookups, 1)
    assert.equal(served.transaction.message.addressTableLookups[0].accountKey, table)
    assert.notInclude(
      served.transaction.message.accountKeys
        .filter((key) => key.source === 'transaction')
        .map((key) => key.pubkey),
      walletAccount
    )

    assert.equal((await scanSolana()).paid, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, payment.signature)

    const other = await solanaOrder(client, 'sol')
    const solPayment = await fixture.chain.paySol(
      fixture.customer,
      fixture.wallet.address,
      lamportsOf(other.actualAmount),
      {
        lookupTables: [await fixture.chain.createLookupTable([fixture.wallet.address])],
      }
    )
    assert.include(
      jsonParsedTransaction(solPayment).meta.loadedAddresses.writable,
      fixture.wallet.address
    )
    assert.equal((await submit(client, other.tradeId, solPayment.signature)).body().data?.status, 2)
  })

  test('a transaction the node serves only in a newer version is kept as unmatched with the reason; later payments still count', async ({
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
    assert.equal(report.unreadable, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, payment.signature)
    const row = await UnmatchedPayment.findByOrFail('reference', unreadable.signature)
    assert.equal(row.toAddress, fixture.wallet.address)
    assert.equal(row.token, 'USDT')
    assert.match(row.reason, /unreadable transaction: .*version this gateway cannot read/)
  })

  test('a transaction whose transfer cannot be parsed is kept as unmatched with the reason', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    await solanaOrder(client, 'usdt')
    const broken = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )
    // a node that leaves the token amount out of a transferChecked
    server.rewrite = (signature, answer: any) => {
      if (signature !== broken.signature) return answer
      const instruction = answer.transaction.message.instructions.find(
        (entry: any) => entry.parsed?.type === 'transferChecked'
      )
      delete instruction.parsed.info.tokenAmount
      return answer
    }
    const report = await scanSolana()
    assert.equal(report.paid, 0)
    assert.equal(report.unreadable, 1)
    const row = await UnmatchedPayment.findByOrFail('reference', broken.signature)
    assert.match(
      row.reason,
      /could not be parsed: a spl-token transferChecked without mint or token amount/
    )
  })

  test('dust below the smallest watched amount is dropped and counted, not recorded', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    for (let index = 1; index <= 3; index++) {
      await fixture.chain.payToken(
        fixture.customer,
        fixture.wallet.address,
        fixture.usdt,
        BigInt(index)
      ) // 0.000001 USDT …
    }
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )
    const report = await scanSolana()
    assert.equal(report.dust, 3)
    assert.equal(report.paid, 1)
    assert.equal(await countRows('unmatched_payments'), 0)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, payment.signature)
  })
})
