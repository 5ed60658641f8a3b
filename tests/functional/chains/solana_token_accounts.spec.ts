import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import { address, type Address } from '@solana/kit'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import { rpcFor } from '#chains/chain_rpc'
import { SolanaRpc } from '#plugins/solana/solana_rpc'
import { TOKEN_2022_PROGRAM_ADDRESS } from '#plugins/solana/solana_programs'
import { MAX_OTHER_TOKEN_ACCOUNTS } from '#plugins/solana/solana_token_accounts'
import { TOKEN_ACCOUNTS_REFRESH_MS } from '#plugins/solana/solana_budget'
import type { SolanaCursor } from '#plugins/solana/solana_scan'
import { resetDatabase } from '#tests/helpers/database'
import { persistedCursor, scanOnce } from '#tests/helpers/scanning'
import { SolanaRpcServer } from '#tests/helpers/solana/solana_rpc_server'
import { SOLANA, prepareSolana, solanaOrder, usdtUnits } from '#tests/helpers/solana/solana_setup'

const scanSolana = () => scanOnce(SOLANA)

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

/** Sets the stored cursor's token account listings back as if made `ms` earlier (time passing, without waiting). */
async function ageListings(ms: number) {
  const cursor = (await persistedCursor(SOLANA)) as SolanaCursor
  for (const mints of Object.values(cursor.tokenAccounts ?? {})) {
    for (const entry of Object.values(mints)) {
      entry.triedAt -= ms
      if (entry.listedAt !== null) entry.listedAt -= ms
    }
  }
  await db
    .from('chain_cursors')
    .where('network', SOLANA)
    .update({ cursor: JSON.stringify(cursor) })
}

async function rpcCall(server: SolanaRpcServer, method: string, params: unknown[]) {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  return response.json() as Promise<any>
}

test.group('Solana: token accounts of the wallet other than its associated one', (group) => {
  const server = new SolanaRpcServer()
  group.setup(async () => {
    await server.start()
    return () => server.stop()
  })
  group.each.setup(() => resetDatabase())

  test('the test node answers getTokenAccountsByOwner as the real one: jsonParsed shape, context slot, refusals, minContextSlot', async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const other = await fixture.chain.createOtherTokenAccount(fixture.wallet.address, fixture.usdt)
    await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('2.5'),
      { toAccount: other }
    )
    const associated = await fixture.chain.associatedTokenAccount(
      fixture.wallet.address,
      fixture.usdt
    )

    const answer = await rpcCall(server, 'getTokenAccountsByOwner', [
      fixture.wallet.address,
      { mint: fixture.usdt },
      { encoding: 'jsonParsed', commitment: 'finalized' },
    ])
    assert.equal(answer.result.context.slot, fixture.chain.finalizedSlot)
    const byAccount = new Map(
      answer.result.value.map((entry: any) => [entry.pubkey, entry.account])
    )
    assert.sameMembers([...byAccount.keys()], [associated, other])
    assert.deepEqual(byAccount.get(other), {
      data: {
        program: 'spl-token',
        parsed: {
          info: {
            isNative: false,
            mint: fixture.usdt,
            owner: fixture.wallet.address,
            state: 'initialized',
            tokenAmount: { amount: '2500000', decimals: 6, uiAmount: 2.5, uiAmountString: '2.5' },
          },
          type: 'account',
        },
        space: 165,
      },
      executable: false,
      lamports: 2039280,
      owner: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
      rentEpoch: 18446744073709551615,
      space: 165,
    })
    // a Token-2022 associated account carries its immutable owner extension (170 bytes)
    const mint2022 = await fixture.chain.createMint(6, { tokenProgram: TOKEN_2022_PROGRAM_ADDRESS })
    await fixture.chain.createTokenAccount(fixture.wallet.address, mint2022)
    const token2022 = await rpcCall(server, 'getTokenAccountsByOwner', [
      fixture.wallet.address,
      { programId: TOKEN_2022_PROGRAM_ADDRESS },
      { encoding: 'jsonParsed' },
    ])
    assert.lengthOf(token2022.result.value, 1)
    assert.equal(token2022.result.value[0].account.data.program, 'spl-token-2022')
    assert.deepEqual(token2022.result.value[0].account.data.parsed.info.extensions, [
      { extension: 'immutableOwner' },
    ])
    assert.equal(token2022.result.value[0].account.space, 170)

    const unknownMint = await rpcCall(server, 'getTokenAccountsByOwner', [
      fixture.wallet.address,
      { mint: fixture.customer.address },
      { encoding: 'jsonParsed' },
    ])
    assert.deepEqual(unknownMint.error, {
      code: -32602,
      message: 'Invalid param: not a Token mint',
    })
    const missingMint = await rpcCall(server, 'getTokenAccountsByOwner', [
      fixture.wallet.address,
      { mint: (await fixture.chain.newWallet(0n)).address },
      { encoding: 'jsonParsed' },
    ])
    assert.deepEqual(missingMint.error, {
      code: -32602,
      message: 'Invalid param: could not find mint',
    })
    const ahead = await rpcCall(server, 'getTokenAccountsByOwner', [
      fixture.wallet.address,
      { mint: fixture.usdt },
      { encoding: 'jsonParsed', minContextSlot: fixture.chain.slot + 5 },
    ])
    assert.deepEqual(ahead.error, {
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: fixture.chain.slot },
    })

    // the real client (@solana/kit: integers upcast to bigint) through the plugin
    const rpc = new SolanaRpc(await rpcFor(await Chain.findByOrFail('network', SOLANA)))
    const read = await rpc.tokenAccountsByOwner(address(fixture.wallet.address), fixture.usdt, {
      commitment: 'finalized',
    })
    assert.equal(read.slot, BigInt(fixture.chain.finalizedSlot))
    assert.deepEqual(
      read.value.find((entry) => entry.pubkey === other),
      {
        pubkey: other,
        mint: fixture.usdt,
        owner: fixture.wallet.address,
        amount: 2_500_000n,
        decimals: 6,
      }
    )
  })

  test('a transfer into a token account of the wallet that is not its associated one pays the order (scan)', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const other = await fixture.chain.createOtherTokenAccount(fixture.wallet.address, fixture.usdt)
    const order = await solanaOrder(client, 'usdt')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8'),
      {
        toAccount: other,
      }
    )
    // the wallet and its associated account are not in the transaction: only the other account is
    assert.notInclude(
      payment.accountKeys.map((key) => key.pubkey),
      await fixture.chain.associatedTokenAccount(fixture.wallet.address, fixture.usdt)
    )
    assert.notInclude(
      payment.accountKeys.map((key) => key.pubkey),
      fixture.wallet.address
    )

    const report = await scanSolana()
    assert.equal(report.paid, 1)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, payment.signature)
    const reference = await db
      .from('payment_references')
      .where('reference', payment.signature)
      .first()
    assert.equal(reference.position, 'ix:0')
    assert.isTrue(
      server.calls.some(
        (call) => call.method === 'getSignaturesForAddress' && call.params[0] === other
      ),
      'the other account is listed'
    )
  })

  test('a transfer into such an account, confirmed but not final, is sighted for the order (payment seen, confirming)', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server, { confirmations: 32 })
    const other = await fixture.chain.createOtherTokenAccount(fixture.wallet.address, fixture.usdt)
    const order = await solanaOrder(client, 'usdt')
    await scanSolana()
    fixture.chain.holdFinality()
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8'),
      {
        toAccount: other,
      }
    )
    const report = await scanSolana()
    assert.equal(report.transfers, 0)
    assert.equal(report.unconfirmed, 1)
    const progress = (await client.get(`/pay/payment-progress/${order.tradeId}`)).body().data
    assert.equal(progress.sighting?.reference, payment.signature)

    fixture.chain.finalize()
    assert.equal((await scanSolana()).paid, 1)
  })

  test('a Token-2022 account of the wallet that is not its associated one is watched too', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const mint = await fixture.chain.createMint(6, { tokenProgram: TOKEN_2022_PROGRAM_ADDRESS })
    await fixture.chain.mintTo(fixture.customer.address, mint, 1_000_000_000n)
    await chainAdmin.setToken(SOLANA, 'USDC', { contract: mint, decimals: 6 })
    await rateAdmin.set('USDC', 'CNY', '7.25')
    const other = await fixture.chain.createOtherTokenAccount(fixture.wallet.address, mint)
    const order = await solanaOrder(client, 'usdc')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      mint,
      usdtUnits('13.8'),
      { toAccount: other }
    )
    assert.equal((await scanSolana()).paid, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, payment.signature)
  })

  test('an account created and paid after the last listing is found at the next listing, its history read back to the one before', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    await scanSolana() // lists the wallet's USDT accounts: only the associated one
    // Time passes: the listing was made five minutes ago, the order ten, and the
    // account was made and paid four minutes ago (scans ran since, unaware of it).
    await ageListings(TOKEN_ACCOUNTS_REFRESH_MS)
    await db
      .from('orders')
      .where('id', order.id)
      .update({ created_at: Date.now() - 10 * 60_000 })
    const other = await fixture.chain.createOtherTokenAccount(fixture.wallet.address, fixture.usdt)
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8'),
      {
        toAccount: other,
        blockTime: Math.floor(Date.now() / 1000) - 240,
      }
    )

    server.calls = []
    assert.equal((await scanSolana()).paid, 1)
    assert.equal(
      server.count('getTokenAccountsByOwner'),
      1,
      'one wallet, one existing mint (USDC does not exist on this chain)'
    )
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, payment.signature)
    const cursor = (await persistedCursor(SOLANA)) as SolanaCursor
    assert.deepEqual(cursor.tokenAccounts![fixture.wallet.address][fixture.usdt].others, [other])

    // within the period the list is not asked again
    server.calls = []
    await scanSolana()
    assert.equal(server.count('getTokenAccountsByOwner'), 0)
  })

  test('submit-tx-hash of a transfer into a token account of the wallet that is not its associated one pays the order', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const other = await fixture.chain.createOtherTokenAccount(fixture.wallet.address, fixture.usdt)
    const order = await solanaOrder(client, 'usdt')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8'),
      {
        toAccount: other,
      }
    )
    const response = await submit(client, order.tradeId, payment.signature)
    assert.equal(response.body().data?.status, 2, JSON.stringify(response.body()))
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, payment.signature)
  })

  test('a token account of someone else is no payment, by scan or by submit-tx-hash', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const stranger = await fixture.chain.newWallet()
    const theirs = await fixture.chain.createOtherTokenAccount(stranger.address, fixture.usdt)
    const order = await solanaOrder(client, 'usdt')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      stranger.address,
      fixture.usdt,
      usdtUnits('13.8'),
      { toAccount: theirs }
    )
    assert.equal((await scanSolana()).transfers, 0)
    const response = await submit(client, order.tradeId, payment.signature)
    response.assertStatus(400)
    assert.match(response.body().message, new RegExp(`not ${fixture.wallet.address}`))
  })

  test(`bounded: at most ${MAX_OTHER_TOKEN_ACCOUNTS} other accounts per wallet and mint are watched, the largest first, and they keep their place`, async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const accounts: Address[] = []
    for (let index = 0; index <= MAX_OTHER_TOKEN_ACCOUNTS; index++) {
      const account = await fixture.chain.createOtherTokenAccount(
        fixture.wallet.address,
        fixture.usdt
      )
      // balances 1 .. n+1 base units: the first one is the smallest
      await fixture.chain.payToken(
        fixture.customer,
        fixture.wallet.address,
        fixture.usdt,
        BigInt(index + 1),
        { toAccount: account }
      )
      accounts.push(account)
    }
    server.calls = []
    await scanSolana()
    const listed = (account: string) =>
      server.calls.some(
        (call) => call.method === 'getSignaturesForAddress' && call.params[0] === account
      )
    assert.deepEqual(
      accounts.map(listed),
      [false, ...Array(MAX_OTHER_TOKEN_ACCOUNTS).fill(true)],
      'the smallest one is left to the balance watch'
    )

    // the smallest grows past the others: the watched ones keep their place (their cursors carry on)
    await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('100'),
      { toAccount: accounts[0] }
    )
    await ageListings(TOKEN_ACCOUNTS_REFRESH_MS)
    await scanSolana()
    const cursor = (await persistedCursor(SOLANA)) as SolanaCursor
    assert.sameMembers(
      cursor.tokenAccounts![fixture.wallet.address][fixture.usdt].others,
      accounts.slice(1)
    )
  })
})
