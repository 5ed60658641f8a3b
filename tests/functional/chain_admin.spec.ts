import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Token from '#models/token'
import chainAdmin from '#services/operators/chain_admin'
import { ChainOverview } from '#services/operators/chain_overview'
import { OperatorError } from '#support/cli/operator_error'
import { RpcPool } from '#chains/rpc_pool'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { runCommand } from '#tests/helpers/ace_command'
import { CLOSED_URL } from '#tests/helpers/processes'
import { HttpStub } from '#tests/helpers/http_stub'
import { Anvil } from '#tests/helpers/evm/anvil'
import { FakeTronGrid } from '#tests/helpers/tron/fake_trongrid'
import { SolanaRpcServer } from '#tests/helpers/solana/solana_rpc_server'
import { SolanaTestChain } from '#tests/helpers/solana/solana_test_chain'
import { startTonFixture, type TonFixture } from '#tests/helpers/ton/ton_setup'
import { FAKE_NETWORK, installFakeChain } from '#tests/helpers/fake_chain'
import ChainSet from '#commands/chain_set'
import ChainList from '#commands/chain_list'

/** An Infura-style endpoint: its key is a path segment. */
const INFURA_KEY = '0123456789abcdef0123456789abcdef'
const KEYED_URL = `https://mainnet.infura.io/v3/${INFURA_KEY}`
const MASKED_URL = 'https://mainnet.infura.io/v3/***'

test.group('Chains: test connection against real and fake nodes', (group) => {
  const anvil = new Anvil()
  const tron = new FakeTronGrid()
  const solana = new SolanaRpcServer()
  const silent = new HttpStub()
  const refusing = new HttpStub()
  let ton: TonFixture

  group.setup(async () => {
    await anvil.start()
    await tron.start()
    await solana.start()
    await silent.start()
    await refusing.start()
    // Answers nothing: a node that hangs.
    silent.handler = () => {}
    ton = await startTonFixture()
    return async () => {
      await anvil.stop()
      await tron.stop()
      await solana.stop()
      await silent.stop()
      await refusing.stop()
      await ton.toncenter.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    RpcPool.reset()
  })
  group.each.timeout(60_000)

  test('EVM (anvil): the head block, its time and the latency', async ({ assert }) => {
    await anvil.mine(5)
    const expected = await anvil.client.getBlock({ blockTag: 'latest' })
    await chainAdmin.set('ethereum', { rpcUrls: [anvil.url] })

    const result = await chainAdmin.testConnection('ethereum')
    assert.isTrue(result.ok)
    assert.lengthOf(result.endpoints, 1)
    const [endpoint] = result.endpoints
    assert.isTrue(endpoint.ok)
    assert.isNull(endpoint.error)
    assert.equal(endpoint.url, anvil.url)
    assert.deepEqual(endpoint.head, {
      kind: 'block',
      number: expected.number.toString(),
      time: Number(expected.timestamp) * 1000,
    })
    assert.isAtLeast(endpoint.latencyMs, 0)
    assert.isBelow(endpoint.latencyMs, 10_000)

    await anvil.mine(3)
    const later = await chainAdmin.testConnection('ethereum')
    assert.equal(
      later.endpoints[0].head?.number,
      (expected.number + 3n).toString(),
      'asked again, not cached'
    )
  })

  test('each endpoint on its own: an unreachable one is named with a clear reason, the good one still answers', async ({
    assert,
  }) => {
    const closed = CLOSED_URL
    await chainAdmin.set('ethereum', { rpcUrls: [closed, anvil.url] })
    const result = await chainAdmin.testConnection('ethereum')
    assert.isFalse(result.ok)
    const [down, up] = result.endpoints
    assert.equal(down.url, closed)
    assert.isFalse(down.ok)
    assert.isNull(down.head)
    assert.equal(down.error, 'connection refused (is the node running, is the port right?)')
    assert.isTrue(up.ok)
    assert.equal(up.head?.kind, 'block')
  })

  test('a node that does not answer: "no answer within" the timeout, not a hang', async ({
    assert,
  }) => {
    await chainAdmin.set('ethereum', { rpcUrls: [silent.url] })
    const started = Date.now()
    const result = await chainAdmin.testConnection('ethereum', { timeoutMs: 400 })
    assert.isBelow(Date.now() - started, 5_000)
    assert.isFalse(result.ok)
    assert.equal(result.endpoints[0].error, 'no answer within 0.4 s')
    assert.isAtLeast(result.endpoints[0].latencyMs, 350)
  })

  test('a refused API key: the HTTP status with a hint, the key masked in the URL and the text', async ({
    assert,
  }) => {
    refusing.handler = (request, response) => {
      // A provider that quotes the request (and so the key) in its error.
      response.writeHead(401, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: `invalid project id in ${request.url}` }))
    }
    const url = `${refusing.url}/v3/${INFURA_KEY}`
    await chainAdmin.set('ethereum', { rpcUrls: [url] })
    const result = await chainAdmin.testConnection('ethereum')
    const [endpoint] = result.endpoints
    assert.isFalse(endpoint.ok)
    assert.equal(endpoint.url, `${refusing.url}/v3/***`)
    assert.match(endpoint.error!, /^HTTP 401.*\(refused: is the API key right\?\)$/)
    assert.notInclude(JSON.stringify(result), INFURA_KEY)
  })

  test('TRON (TronGrid), Solana (slot) and TON (masterchain seqno) report their heads', async ({
    assert,
  }) => {
    tron.reset()
    tron.mine(4)
    await chainAdmin.set('tron', { rpcUrls: [tron.url] })
    const tronResult = await chainAdmin.testConnection('tron')
    assert.isTrue(tronResult.ok, JSON.stringify(tronResult))
    assert.deepEqual(tronResult.endpoints[0].head, {
      kind: 'block',
      number: String(tron.head.number),
      time: tron.head.timestamp,
    })

    const ledger = await SolanaTestChain.create()
    solana.serve(ledger)
    await chainAdmin.set('solana', { rpcUrls: [solana.url] })
    const solanaResult = await chainAdmin.testConnection('solana')
    assert.isTrue(solanaResult.ok, JSON.stringify(solanaResult))
    assert.equal(solanaResult.endpoints[0].head?.kind, 'slot')
    assert.match(solanaResult.endpoints[0].head!.number, /^\d+$/)
    assert.equal(solana.calls.at(-1)?.method, 'getSlot')

    await chainAdmin.set('ton', { rpcUrls: [ton.toncenter.rpcUrl] })
    const tonResult = await chainAdmin.testConnection('ton')
    assert.isTrue(tonResult.ok, JSON.stringify(tonResult))
    assert.deepEqual(tonResult.endpoints[0].head, {
      kind: 'seqno',
      number: String(ton.chain.transactions.length + 1),
      time: null,
    })
  })

  test('refused with a clear message: unknown network, no endpoint, a family without head, a family not loaded', async ({
    assert,
  }) => {
    const admin = chainAdmin
    await assert.rejects(() => admin.testConnection('nowhere'), /Unknown network "nowhere"/)
    await admin.set('ethereum', { rpcUrls: [] })
    await assert.rejects(
      () => admin.testConnection('ethereum'),
      /ethereum has no RPC endpoint to test: add one first/
    )

    await installFakeChain()
    await db
      .from('chains')
      .where('network', FAKE_NETWORK)
      .update({ rpc_urls: JSON.stringify(['http://127.0.0.1:9']) })
    await assert.rejects(
      () => admin.testConnection(FAKE_NETWORK),
      /The fake family cannot report the head of its chain/
    )

    const now = Date.now()
    await db.table('chains').insert({
      network: 'ghostnet',
      family: 'ghost',
      display_name: 'Ghost',
      enabled: true,
      rpc_urls: JSON.stringify(['http://127.0.0.1:9']),
      confirmations: 1,
      scan_interval_seconds: 5,
      sort_order: 2000,
      created_at: now,
      updated_at: now,
    })
    const refused = await admin.testConnection('ghostnet').catch((error) => error)
    assert.instanceOf(refused, OperatorError)
    assert.equal(refused.message, 'No enabled plugin brings the family "ghost" of ghostnet')
  })
})

test.group('Chains: RPC URLs, tokens and the overview', (group) => {
  group.each.setup(() => resetDatabase())

  test('a URL shown masked stands for the stored one: the form can be sent back without the key', async ({
    assert,
  }) => {
    const admin = chainAdmin
    await admin.set('ethereum', { rpcUrls: [KEYED_URL, 'https://ethereum-rpc.publicnode.com'] })
    const shown = (await new ChainOverview().one('ethereum')).rpcUrls
    assert.deepEqual(shown, [MASKED_URL, 'https://ethereum-rpc.publicnode.com'])

    // Sent back as shown, reordered, with a blank line and a new endpoint.
    await admin.set('ethereum', { rpcUrls: ['https://rpc.ankr.com/eth', '', `  ${MASKED_URL}  `] })
    const stored = await Chain.findByOrFail('network', 'ethereum')
    assert.deepEqual(stored.rpcUrls, ['https://rpc.ankr.com/eth', KEYED_URL])
  })

  test('RPC URLs refused: not a URL, another scheme, a mask matching nothing, twice the same, too many', async ({
    assert,
  }) => {
    const admin = chainAdmin
    await admin.set('ethereum', { rpcUrls: [KEYED_URL] })
    const before = await countRows('audit_log')
    for (const [urls, message] of [
      [['not a url'], /"not a url" is not a URL/],
      [['ftp://example.com/rpc'], /must be an http\(s\) or ws\(s\) URL/],
      [['https://other.example/v3/***'], /matches no stored URL: type the URL in full/],
      [[KEYED_URL, MASKED_URL], /is listed twice/],
      [
        Array.from({ length: 11 }, (_, index) => `https://rpc${index}.example`),
        /at most 10 RPC URLs/,
      ],
    ] as const) {
      const error = await admin.set('ethereum', { rpcUrls: [...urls] }).catch((failure) => failure)
      assert.instanceOf(error, OperatorError)
      assert.match(error.message, message)
      assert.notInclude(error.message, INFURA_KEY)
    }
    assert.deepEqual((await Chain.findByOrFail('network', 'ethereum')).rpcUrls, [KEYED_URL])
    assert.equal(await countRows('audit_log'), before, 'nothing written')
  })

  test('chain:set takes the masked URL chain:list prints', async ({ assert }) => {
    await chainAdmin.set('ethereum', { rpcUrls: [KEYED_URL] })
    const listed = await runCommand(ChainList, [])
    assert.include(listed.output, MASKED_URL)
    assert.notInclude(listed.output, INFURA_KEY)
    const result = await runCommand(ChainSet, [
      'ethereum',
      `--rpc=${MASKED_URL}`,
      '--confirmations=20',
    ])
    assert.equal(result.exitCode, 0, result.output)
    const stored = await Chain.findByOrFail('network', 'ethereum')
    assert.deepEqual(stored.rpcUrls, [KEYED_URL])
    assert.equal(stored.confirmations, 20)
  })

  test('tokens: enable and disable, audited; a bad contract or a family not loaded is an operator refusal', async ({
    assert,
  }) => {
    const admin = chainAdmin
    const disabled = await admin.setToken('ethereum', 'usdc', { enabled: false })
    assert.isFalse(disabled.enabled)
    assert.isTrue((await admin.setToken('ethereum', 'USDC', { enabled: true })).enabled)
    const rows = await db.from('audit_log').where('subject_id', 'ethereum/USDC').orderBy('id')
    assert.deepEqual(
      rows.map((row) => [
        row.action,
        JSON.parse(row.before).enabled,
        JSON.parse(row.after).enabled,
      ]),
      [
        ['token.update', true, false],
        ['token.update', false, true],
      ]
    )

    const bad = await admin
      .setToken('ethereum', 'DAI', { decimals: 18, contract: '0x1234' })
      .catch((error) => error)
    assert.instanceOf(bad, OperatorError)
    assert.match(bad.message, /not an EVM address/)

    await db.from('chains').where('network', 'ethereum').update({ family: 'ghost' })
    const unloaded = await admin
      .setToken('ethereum', 'DAI', {
        decimals: 18,
        contract: '0x6B175474E89094C44Da98b954EedeAC495271d0F',
      })
      .catch((error) => error)
    assert.instanceOf(unloaded, OperatorError)
    assert.equal(unloaded.message, 'No enabled plugin brings the family "ghost" of ethereum')
    assert.isNull(await Token.query().where('symbol', 'DAI').first())
  })

  test('the overview: tokens, wallet counts, scanner state with secrets masked, API key as a hint only', async ({
    assert,
  }) => {
    const apiKey = 'tron-pro-key-abcdefghijklmnop-1234'
    const admin = chainAdmin
    await admin.set('tron', { apiKey, rpcUrls: ['https://api.trongrid.io'] })
    await admin.setToken('tron', 'TRX', { enabled: false })
    const now = Date.now()
    await db.table('wallets').multiInsert([
      {
        network: 'tron',
        address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
        enabled: true,
        note: '',
        created_at: now,
        updated_at: now,
      },
      {
        network: 'tron',
        address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
        enabled: false,
        note: '',
        created_at: now,
        updated_at: now,
      },
    ])
    await db.table('chain_cursors').insert({
      network: 'tron',
      cursor: '{"since":1}',
      caught_up: false,
      last_scan_at: now,
      last_error: `interrupted: HTTP 429 from ${KEYED_URL}`,
      updated_at: now,
    })

    const all = await new ChainOverview().all()
    assert.deepEqual(
      all.map((chain) => chain.network),
      (await Chain.query().orderBy('sort_order')).map((chain) => chain.network)
    )
    const tron = all.find((chain) => chain.network === 'tron')!
    assert.isTrue(tron.familyLoaded)
    assert.isTrue(tron.canTestConnection)
    assert.deepEqual(tron.wallets, { total: 2, enabled: 1 })
    assert.deepEqual(
      tron.tokens.map((token) => [token.symbol, token.enabled]),
      [
        ['USDT', true],
        ['USDC', true],
        ['TRX', false],
      ]
    )
    assert.isTrue(tron.apiKeySet)
    assert.equal(tron.apiKeyHint, '…1234')
    assert.deepEqual(tron.scan, {
      lastScanAt: now,
      lastError: `HTTP 429 from ${MASKED_URL}`,
      interrupted: true,
      caughtUp: false,
      cursor: '{"since":1}',
    })
    assert.isNotNull(tron.load)
    const ethereum = all.find((chain) => chain.network === 'ethereum')!
    assert.deepEqual(ethereum.scan, {
      lastScanAt: null,
      lastError: '',
      interrupted: false,
      caughtUp: true,
      cursor: '',
    })
    assert.notInclude(JSON.stringify(all), apiKey)
    await assert.rejects(() => new ChainOverview().one('nowhere'), /Unknown network "nowhere"/)
  })
})
