import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import Token from '#models/token'
import { rpcFor } from '#chains/chain_rpc'
import { RpcPool } from '#chains/rpc_pool'
import { SolanaFamily } from '#plugins/solana/solana_family'
import { SolanaRpc } from '#plugins/solana/solana_rpc'
import {
  PUBLIC_ENDPOINT_BUDGET,
  solanaRequestsPerDay,
  solanaRpcBudget,
} from '#plugins/solana/solana_budget'
import type { SolanaCursor } from '#plugins/solana/solana_scan'
import { resetDatabase } from '#tests/helpers/database'
import { PUBLIC_RATE_LIMITS, SolanaRpcServer } from '#tests/helpers/solana/solana_rpc_server'
import {
  SOLANA,
  prepareSolana,
  solanaOrder,
  usdtUnits,
  type SolanaFixture,
} from '#tests/helpers/solana/solana_setup'
import chainScanner from '#services/chain_scanner'
import { scanOnce } from '#tests/helpers/scanning'

const scanSolana = () => scanOnce(SOLANA)

/** Signatures whose transaction a server served (getTransaction answered), in order. */
function fetched(server: SolanaRpcServer): string[] {
  return server.calls
    .filter((call) => call.method === 'getTransaction')
    .map((call) => String(call.params[0]))
}

/** One scan run; its detail when it did not scan (e.g. every endpoint held). */
async function scanOnceOrDetail(): Promise<string> {
  const [report] = await chainScanner.scan({ network: SOLANA })
  return report.scanned ? '' : report.detail
}

/** Time passes over the endpoints' holds: the remembered ones (written once the run that learned them settles) and this process's. */
async function passHolds() {
  for (
    let waited = 0;
    Number((await db.from('rpc_endpoints').count('* as total').first()).total) === 0;
    waited += 20
  ) {
    if (waited > 10_000) throw new Error('the hold was never remembered')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await db.from('rpc_endpoints').update({ hold_until: 0, hold_kind: null, hold_reason: '' })
  RpcPool.reset()
}

async function setBudget(perSecond: number) {
  await Chain.query().where('network', SOLANA).update({ rpc_requests_per_second: perSecond })
}

/** `count` USDT transfers to the wallet, amounts 1..count USDT, oldest first. */
async function payments(fixture: SolanaFixture, count: number) {
  const made = []
  for (let amount = 1; amount <= count; amount++) {
    made.push(
      await fixture.chain.payToken(
        fixture.customer,
        fixture.wallet.address,
        fixture.usdt,
        usdtUnits(String(amount))
      )
    )
  }
  return made
}

test.group('Solana: rate limits and partial progress', (group) => {
  const server = new SolanaRpcServer()
  group.setup(async () => {
    await server.start()
    return () => server.stop()
  })
  group.each.setup(() => resetDatabase())

  test('60 finalized signatures in the window: the payment among them is paid under the public limit, each fetched once', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    // oldest of the window: the scan reads newest first, so it comes last
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )
    const window = [payment.signature]
    for (let index = 1; index <= 59; index++) {
      // poisoning dust
      window.push(
        (
          await fixture.chain.payToken(
            fixture.customer,
            fixture.wallet.address,
            fixture.usdt,
            BigInt(index)
          )
        ).signature
      )
    }
    server.limit(PUBLIC_RATE_LIMITS)
    await setBudget(PUBLIC_ENDPOINT_BUDGET.perSecond)
    server.calls = []

    let runs = 0
    let dust = 0
    while ((await Order.findOrFail(order.id)).status !== 2 && runs < 3) {
      const report = await scanSolana()
      dust += report.dust
      runs++
    }
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, payment.signature)
    assert.equal(runs, 1)
    assert.equal(dust, 59)
    assert.deepEqual(server.limited, [], 'paced under the limit: never refused')
    const signatures = fetched(server)
    assert.equal(new Set(signatures).size, signatures.length, 'none fetched twice')
    assert.sameMembers(
      signatures.filter((signature) => window.includes(signature)),
      window
    )
  }).timeout(120_000)

  test('a run stopped midway by a rate limit keeps its progress; the next resumes there without re-reading', async ({
    client,
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    const order = await solanaOrder(client, 'usdt')
    const payment = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('13.8')
    )
    const window = [
      payment.signature,
      ...(await payments(fixture, 44)).map((made) => made.signature),
    ]
    // a stricter provider: 25 getTransaction, then a wait far longer than the request timeout
    server.limit({ perMethod: 25, overall: 1000, windowMs: 3_600_000 })
    await setBudget(1000)
    server.calls = []

    const first = await scanSolana()
    assert.match(first.interrupted ?? '', /429/)
    assert.equal(first.paid, 0)
    const cursorRow = await db.from('chain_cursors').where('network', SOLANA).first()
    assert.match(cursorRow.last_error, /^interrupted: .*429/)
    const firstFetched = fetched(server)
    assert.lengthOf(firstFetched, 25)
    assert.include(server.limited, 'getTransaction')
    const account = await fixture.chain.associatedTokenAccount(fixture.wallet.address, fixture.usdt)
    const kept = (JSON.parse(cursorRow.cursor) as SolanaCursor).accounts[account]
    assert.equal(
      kept.before,
      firstFetched[firstFetched.length - 1],
      'the cursor is just past the last processed signature'
    )
    assert.isNull(kept.until)
    assert.equal((await Order.findOrFail(order.id)).status, 1)

    // The endpoint asked for longer than a request may wait: the pool holds it
    // (in this process and in rpc_endpoints, for the next runs) until then.
    const held = await scanOnceOrDetail()
    assert.match(held, /held: .*rate limited/)
    // The provider's window has passed: its limit and the gateway's hold are over.
    server.limit(null)
    await passHolds()
    server.calls = []
    const second = await scanSolana()
    assert.isNull(second.interrupted)
    assert.equal(second.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).blockTransactionId, payment.signature)
    const secondFetched = fetched(server)
    assert.sameMembers(
      secondFetched.filter((signature) => window.includes(signature)),
      window.filter((signature) => !firstFetched.includes(signature)),
      'the rest of the window, once'
    )
    assert.deepEqual(
      secondFetched.filter(
        (signature) => window.includes(signature) && firstFetched.includes(signature)
      ),
      [],
      'nothing of the window fetched twice'
    )
  }).timeout(60_000)

  test('a 429 from the node is a limit: waited out (Retry-After) on the same endpoint, never an outage', async ({
    assert,
  }) => {
    const fixture = await prepareSolana(server)
    await payments(fixture, 2)
    server.limit({ perMethod: 1, overall: 100, windowMs: 1000 })
    const pool = await rpcFor(await Chain.findByOrFail('network', SOLANA))
    const rpc = new SolanaRpc(pool)
    const account = await fixture.chain.associatedTokenAccount(fixture.wallet.address, fixture.usdt)
    const started = Date.now()
    const pages = [
      await rpc.signaturesForAddress(account, { limit: 10, commitment: 'finalized' }),
      await rpc.signaturesForAddress(account, { limit: 10, commitment: 'finalized' }),
    ]
    assert.deepEqual(
      pages.map((page) => page.length),
      [3, 3]
    )
    assert.deepEqual(server.limited, ['getSignaturesForAddress'])
    assert.isAtLeast(Date.now() - started, 900, 'waited the Retry-After of 1 s')
    assert.equal(RpcPool.health(server.url)?.failures ?? 0, 0)
  })

  test('the 429 body is the public endpoint’s JSON-RPC error, with Retry-After', async ({
    assert,
  }) => {
    await prepareSolana(server)
    server.limit({ perMethod: 1, overall: 100, windowMs: 10_000 })
    const ask = () =>
      fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'getSlot', params: [] }),
      })
    assert.equal((await ask()).status, 200)
    const refused = await ask()
    assert.equal(refused.status, 429)
    assert.equal(refused.headers.get('retry-after'), '10')
    assert.deepEqual(await refused.json(), {
      jsonrpc: '2.0',
      error: {
        code: 429,
        message:
          'Too many requests for a specific RPC call, contact your app developer or support@rpcpool.com.',
      },
      id: 7,
    })
  })

  test('budget and cost: 4 requests/s on the public endpoints, the core’s elsewhere; requests per day per wallet', async ({
    assert,
  }) => {
    assert.deepEqual(solanaRpcBudget('https://api.mainnet-beta.solana.com'), {
      perSecond: 4,
      perDay: null,
    })
    assert.deepEqual(solanaRpcBudget('https://api.devnet.solana.com/'), {
      perSecond: 4,
      perDay: null,
    })
    assert.isNull(solanaRpcBudget('https://mainnet.helius-rpc.com/?api-key=x'))
    assert.isNull(solanaRpcBudget('not a url'))

    const chain = { confirmations: 32, scanIntervalSeconds: 5 } as Chain
    // 3 tokens (USDT, USDC, SOL): 3 accounts, each listed twice a run (finalized, and confirmed for
    // sightings), the wallet's token accounts listed every 5 minutes (288 times a day, per token),
    // and a balance reading every 10 minutes (144 a day, one read per token)
    assert.equal(solanaRequestsPerDay(chain, 1, 3), 103_680 + 864 + 432)
    assert.equal(solanaRequestsPerDay(chain, 2, 3), 207_360 + 1_728 + 864)
    assert.equal(
      solanaRequestsPerDay({ confirmations: 1, scanIntervalSeconds: 10 } as Chain, 1, 3),
      25_920 + 864 + 432
    )
  })
})

test.group('Solana: paging through endpoints that do not know a signature', (group) => {
  const full = new SolanaRpcServer()
  const lagging = new SolanaRpcServer()
  group.setup(async () => {
    await full.start()
    await lagging.start()
    return async () => {
      await lagging.stop()
      await full.stop()
    }
  })
  group.each.setup(() => resetDatabase())

  /**
   * Ten payments (1..10 USDT); a first run on the full node reads the four
   * newest (a bounded run: `before` is the fourth), then the lagging node,
   * which does not know that signature, is asked.
   */
  async function halfRead() {
    const fixture = await prepareSolana(full)
    lagging.serve(fixture.chain)
    await payments(fixture, 10)
    const family = new SolanaFamily({ pageSize: 4, maxSignaturesPerAccount: 4 })
    const chain = await Chain.findByOrFail('network', SOLANA)
    const context = {
      chain,
      tokens: await Token.query().where('network', SOLANA).where('enabled', true),
      addresses: [fixture.wallet.address],
      startTime: Date.now() - 60_000,
      maxBlocksPerScan: 1000,
    }
    const first = await family.scan({ ...context, rpc: await rpcFor(chain), cursor: null })
    if (first.caughtUp)
      throw new Error('setup: the first run should have stopped after four signatures')
    const account = await fixture.chain.associatedTokenAccount(fixture.wallet.address, fixture.usdt)
    const before = (first.cursor as SolanaCursor).accounts[account].before!
    lagging.forgotten.add(before)
    return { fixture, family, context, first, before }
  }

  type Run = {
    transfers: { amount: string }[]
    caughtUp: boolean
    cursor: unknown
    interrupted?: string
  }

  async function scanUntilCaughtUp(run: () => Promise<Run>) {
    const amounts: string[] = []
    for (let runs = 0; runs < 6; runs++) {
      const result = await run()
      amounts.push(...result.transfers.map((transfer) => transfer.amount))
      if (result.caughtUp && !result.interrupted) return amounts
    }
    return amounts
  }

  for (const mode of ['empty', 'error'] as const) {
    const answer = mode === 'empty' ? '`[]`' : 'an error'
    test(`an endpoint answering ${answer} for an unknown \`before\`, alone: the window is re-read, nothing lost or read twice`, async ({
      assert: check,
    }) => {
      const { family, context, first, before } = await halfRead()
      lagging.unknownSignature = mode
      await chainAdmin.set(SOLANA, { rpcUrls: [lagging.url] })
      const chain = await Chain.findByOrFail('network', SOLANA)
      let cursor = JSON.parse(JSON.stringify(first.cursor))
      lagging.calls = []
      const later = await scanUntilCaughtUp(async () => {
        const result = await family.scan({ ...context, chain, rpc: await rpcFor(chain), cursor })
        cursor = JSON.parse(JSON.stringify(result.cursor))
        return result
      })
      const all = [...first.transfers.map((transfer) => transfer.amount), ...later].sort(
        (a, b) => Number(a) - Number(b)
      )
      check.deepEqual(all, ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'])
      check.isTrue(
        lagging.calls.some(
          (call) =>
            call.method === 'getSignaturesForAddress' && (call.params[1] as any)?.before === before
        )
      )
      // the re-read skipped what the first run had processed
      check.deepEqual(
        fetched(lagging).filter((signature) =>
          first.transfers.some((transfer) => transfer.reference === signature)
        ),
        []
      )
    })

    test(`an endpoint answering ${answer} for an unknown \`before\`, with a backup: the scan goes on there`, async ({
      assert: check,
    }) => {
      const { family, context, first, before } = await halfRead()
      lagging.unknownSignature = mode
      await chainAdmin.set(SOLANA, { rpcUrls: [lagging.url, full.url] })
      const chain = await Chain.findByOrFail('network', SOLANA)
      let cursor = JSON.parse(JSON.stringify(first.cursor))
      lagging.calls = []
      full.calls = []
      const result = await family.scan({ ...context, chain, rpc: await rpcFor(chain), cursor })
      cursor = result.cursor
      const all = [...first.transfers, ...result.transfers]
        .map((transfer) => transfer.amount)
        .sort((a, b) => Number(a) - Number(b))
      check.deepEqual(all, ['3', '4', '5', '6', '7', '8', '9', '10'])
      check.isTrue(
        full.calls.some(
          (call) =>
            call.method === 'getSignaturesForAddress' && (call.params[1] as any)?.before === before
        ),
        'the backup continued from the same signature'
      )
      check.deepEqual(fetched(lagging), [])
      check.isAtLeast(RpcPool.health(lagging.url)?.failures ?? 0, 1)
    })
  }

  test('two re-reads of one window: only what was processed is skipped, the signatures between are read', async ({
    assert: check,
  }) => {
    const { fixture, family, context, first } = await halfRead() // 10..7 read on the full node
    for (let amount = 11; amount <= 15; amount++) {
      await fixture.chain.payToken(
        fixture.customer,
        fixture.wallet.address,
        fixture.usdt,
        usdtUnits(String(amount))
      )
    }
    await chainAdmin.set(SOLANA, { rpcUrls: [lagging.url] })
    const chain = await Chain.findByOrFail('network', SOLANA)
    const runs: string[][] = [first.transfers.map((transfer) => transfer.amount)]
    let cursor = JSON.parse(JSON.stringify(first.cursor))
    const scan = async () => {
      const result = await family.scan({ ...context, chain, rpc: await rpcFor(chain), cursor })
      cursor = JSON.parse(JSON.stringify(result.cursor))
      runs.push(result.transfers.map((transfer) => transfer.amount))
      return result
    }
    await scan() // re-read from the new top: 15..12
    check.sameMembers(runs[1], ['12', '13', '14', '15'])
    const account = Object.keys((cursor as SolanaCursor).accounts).find(
      (key) => (cursor as SolanaCursor).accounts[key].before
    )!
    lagging.forgotten.add((cursor as SolanaCursor).accounts[account].before!) // 12: unknown now too
    for (let run = 0; run < 5; run++) {
      const result = await scan()
      if (result.caughtUp) break
    }
    const all = runs.flat().sort((a, b) => Number(a) - Number(b))
    const expected = Array.from({ length: 15 }, (_, index) => String(index + 1))
    check.deepEqual(all, expected, 'every payment once: 11, between the two re-reads, too')
  })

  test('an endpoint that errors on an unknown `until`: the new signatures are read down to its slot, the old ones not again', async ({
    assert: check,
  }) => {
    const fixture = await prepareSolana(full)
    lagging.serve(fixture.chain)
    const family = new SolanaFamily()
    const older = await payments(fixture, 3)
    const chain = await Chain.findByOrFail('network', SOLANA)
    const context = {
      chain,
      tokens: await Token.query().where('network', SOLANA).where('enabled', true),
      addresses: [fixture.wallet.address],
      startTime: Date.now() - 60_000,
      maxBlocksPerScan: 1000,
    }
    const first = await family.scan({ ...context, rpc: await rpcFor(chain), cursor: null })
    check.lengthOf(first.transfers, 3)
    lagging.forgotten.add(older[2].signature) // the newest processed: the account's `until`
    lagging.unknownSignature = 'error'
    const newer = await fixture.chain.payToken(
      fixture.customer,
      fixture.wallet.address,
      fixture.usdt,
      usdtUnits('4')
    )

    await chainAdmin.set(SOLANA, { rpcUrls: [lagging.url] })
    const onLagging = await Chain.findByOrFail('network', SOLANA)
    const result = await family.scan({
      ...context,
      chain: onLagging,
      rpc: await rpcFor(onLagging),
      cursor: first.cursor,
    })
    check.isUndefined(result.interrupted)
    check.deepEqual(
      result.transfers.map((transfer) => [transfer.reference, transfer.amount]),
      [[newer.signature, '4']]
    )
    check.deepEqual(
      fetched(lagging).filter((signature) => older.some((made) => made.signature === signature)),
      []
    )
  })
})
