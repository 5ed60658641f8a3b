import walletAdmin from '#services/operators/wallet_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Token from '#models/token'
import { RpcPool } from '#chains/rpc_pool'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { CLOSED_URL } from '#tests/helpers/processes'
import { Anvil } from '#tests/helpers/evm/anvil'

const INFURA_KEY = '0123456789abcdef0123456789abcdef'
const KEYED_URL = `https://mainnet.infura.io/v3/${INFURA_KEY}`
const MASKED_URL = 'https://mainnet.infura.io/v3/***'
const API_KEY = 'tron-pro-key-abcdefghijklmnop-1234'
const DAI = '0x6B175474E89094C44Da98b954EedeAC495271d0F'

async function signedIn(role: 'admin' | 'viewer' = 'admin') {
  return AdminAgent.signIn(await createAdminUser({ role }))
}

/** The fields of the chain form as the page fills them in, with `changes` applied. */
async function chainForm(network: string, changes: Record<string, string> = {}) {
  const chain = await Chain.findByOrFail('network', network)
  return {
    display_name: chain.displayName,
    rpc_urls: chain.rpcUrls.map((url) => (url === KEYED_URL ? MASKED_URL : url)).join('\n'),
    api_key: '',
    confirmations: String(chain.confirmations),
    scan_interval: String(chain.scanIntervalSeconds),
    block_time: String(chain.blockTimeMs / 1000),
    requests_per_second:
      chain.rpcRequestsPerSecond === null ? '' : String(chain.rpcRequestsPerSecond),
    requests_per_day: chain.rpcRequestsPerDay === null ? '' : String(chain.rpcRequestsPerDay),
    explorer_tx_url: chain.explorerTxUrl,
    options: Object.entries(chain.options)
      .map(([key, value]) => `${key}=${value}`)
      .join('\n'),
    ...changes,
  }
}

/** The rows of the chains and tokens tables and the audit log, to prove a refusal wrote nothing. */
async function snapshotOfChains() {
  return JSON.stringify([
    await db.from('chains').orderBy('id').select('*'),
    await db.from('tokens').orderBy('id').select('*'),
    await countRows('audit_log'),
  ])
}

test.group('Console chains: list and chain page', (group) => {
  group.each.setup(() => resetDatabase())

  test('the list shows every chain with its state, tokens, wallets and scanner status, secrets masked', async ({
    assert,
  }) => {
    await chainAdmin.set('ethereum', { rpcUrls: [KEYED_URL] })
    await chainAdmin.set('tron', { apiKey: API_KEY })
    await chainAdmin.setToken('tron', 'TRX', { enabled: false })
    await chainAdmin.set('polygon', { enabled: false })
    await walletAdmin.add('tron', 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf')
    const now = Date.now()
    await db.table('chain_cursors').insert({
      network: 'ethereum',
      cursor: '{"block":"123","hash":"0xabc"}',
      caught_up: true,
      last_scan_at: now,
      last_error: `every RPC endpoint failed; last: HTTP 500 from ${KEYED_URL}`,
      updated_at: now,
    })
    const agent = await signedIn()
    const page = await agent.get('/chains')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    for (const chain of await Chain.all()) assert.include(text, chain.displayName)
    assert.include(text, 'TRX (off)')
    assert.include(text, '{"block":"123","hash":"0xabc"}')
    assert.include(text, `Failed every RPC endpoint failed; last: HTTP 500 from ${MASKED_URL}`)
    assert.include(text, 'Disabled')
    assert.include(text, 'API key set')
    assert.include(page.text, '/admin/wallets?network=tron')
    assert.notInclude(page.text, INFURA_KEY)
    assert.notInclude(page.text, API_KEY)
  })

  test('the chain page fills the form in; the API key is never rendered, only its last characters', async ({
    assert,
  }) => {
    await chainAdmin.set('tron', {
      apiKey: API_KEY,
      rpcUrls: [KEYED_URL, 'https://api.trongrid.io'],
    })
    const agent = await signedIn()
    const page = await agent.get('/chains/tron')
    assert.equal(page.status, 200)
    assert.include(page.text, `${MASKED_URL}\nhttps://api.trongrid.io`)
    assert.include(page.text, 'Set (…1234): leave blank to keep it')
    assert.match(page.text, /<input id="f-api_key" name="api_key" type="password"(?![^>]*value=)/)
    assert.notInclude(page.text, API_KEY)
    assert.notInclude(page.text, INFURA_KEY)
    assert.include(pageText(page.text), 'Add a token')
    assert.include((await agent.get('/chains/ethereum')).text, 'blockRange=1000\nchainId=1')

    // A WebSocket is offered only where the family can watch heads (chain:set refuses it elsewhere).
    assert.include(
      pageText(page.text),
      'Polled every scan interval: the tron family is not told of new blocks over a WebSocket.'
    )
    assert.notInclude(page.text, 'chain:set tron --ws URL')
    const ethereum = pageText((await agent.get('/chains/ethereum')).text)
    assert.include(
      ethereum,
      'WebSocket (a scan on every new head): none, polled · set with chain:set ethereum --ws URL'
    )
    assert.notInclude(ethereum, 'Polled every scan interval')

    assert.equal((await agent.get('/chains/nowhere')).status, 404)
    assert.equal((await agent.get('/chains/tron/tokens/NOPE')).status, 404)
  })

  test('a viewer reads the pages without forms or keys', async ({ assert }) => {
    await chainAdmin.set('tron', { apiKey: API_KEY })
    const viewer = await signedIn('viewer')
    const page = await viewer.get('/chains/tron')
    assert.equal(page.status, 200)
    assert.include(pageText(page.text), 'Set (…1234)')
    assert.notInclude(page.text, 'name="confirmations"')
    assert.notInclude(page.text, 'Test connection')
    assert.notInclude(page.text, API_KEY)
    assert.equal((await viewer.get('/chains')).status, 200)
    assert.equal((await viewer.get('/plugins')).status, 200)
    assert.equal((await viewer.get('/chains/tron/tokens/USDT')).status, 200)
  })
})

test.group('Console chains: changes', (group) => {
  group.each.setup(() => resetDatabase())

  test('saving the form changes the chain through the service, audited as the signed-in user', async ({
    assert,
  }) => {
    await chainAdmin.set('ethereum', { rpcUrls: [KEYED_URL], apiKey: API_KEY })
    const admin = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    await agent.get('/chains/ethereum')
    const response = await agent.post(
      '/chains/ethereum',
      await chainForm('ethereum', {
        display_name: 'Ethereum mainnet',
        rpc_urls: `${MASKED_URL}\n\nhttps://ethereum-rpc.publicnode.com`,
        confirmations: '20',
        scan_interval: '30',
        block_time: '12.5',
        requests_per_second: '2.5',
        requests_per_day: '0',
        explorer_tx_url: 'https://eth.blockscout.com/tx/{tx}',
        options: 'chainId=1',
      })
    )
    assert.equal(response.status, 302)
    assert.equal(response.location, '/admin/chains/ethereum')
    const chain = await Chain.findByOrFail('network', 'ethereum')
    assert.equal(chain.displayName, 'Ethereum mainnet')
    assert.deepEqual(chain.rpcUrls, [KEYED_URL, 'https://ethereum-rpc.publicnode.com'])
    assert.equal(chain.rpcApiKey(), API_KEY, 'a blank key field keeps the key')
    assert.equal(chain.confirmations, 20)
    assert.equal(chain.scanIntervalSeconds, 30)
    assert.equal(chain.blockTimeMs, 12_500)
    assert.equal(chain.rpcRequestsPerSecond, 2.5)
    assert.equal(chain.rpcRequestsPerDay, 0)
    assert.equal(chain.explorerTxUrl, 'https://eth.blockscout.com/tx/{tx}')
    assert.deepEqual(
      chain.options,
      { chainId: 1 },
      'the removed blockRange line removed the option'
    )

    const page = await agent.follow(response.location!)
    assert.include(pageText(page.text), 'Ethereum mainnet (ethereum) was saved.')
    const row = await db
      .from('audit_log')
      .where('action', 'chain.update')
      .orderBy('id', 'desc')
      .firstOrFail()
    assert.equal(row.actor_user_id, admin.user.id)
    assert.notInclude(JSON.stringify(row), API_KEY)
    assert.notInclude(JSON.stringify(row), INFURA_KEY)

    // A new key replaces it; "remove" clears it; both at once is refused.
    await agent.post(
      '/chains/ethereum',
      await chainForm('ethereum', { api_key: 'a-new-key-0000000000000000' })
    )
    assert.equal(
      (await Chain.findByOrFail('network', 'ethereum')).rpcApiKey(),
      'a-new-key-0000000000000000'
    )
    const both = await agent.post(
      '/chains/ethereum',
      await chainForm('ethereum', { api_key: 'x-key', clear_api_key: '1' })
    )
    assert.include(
      pageText((await agent.follow(both.location!)).text),
      'Either type a new API key or tick "Remove the API key", not both'
    )
    await agent.post('/chains/ethereum', await chainForm('ethereum', { clear_api_key: '1' }))
    assert.equal((await Chain.findByOrFail('network', 'ethereum')).rpcApiKey(), '')
  })

  test('refusals are shown on the form and write nothing: bad RPC URL, out-of-range numbers, bad option, not a number', async ({
    assert,
  }) => {
    const agent = await signedIn()
    await agent.get('/chains/ethereum')
    for (const [changes, message] of [
      [{ rpc_urls: 'not a url', confirmations: '3' }, '"not a url" is not a URL'],
      [{ rpc_urls: 'ftp://example.com/rpc' }, 'must be an http(s) or ws(s) URL'],
      [{ rpc_urls: 'https://other.example/v3/***' }, 'matches no stored URL: type the URL in full'],
      [{ confirmations: '5000' }, 'Confirmations must be a whole number from 0 to 1000'],
      [
        { scan_interval: '0' },
        'The scan interval must be a whole number of seconds from 1 to 3600',
      ],
      [{ requests_per_second: 'fast' }, 'Requests per second takes a number, not "fast"'],
      [{ explorer_tx_url: 'https://etherscan.io/tx/' }, 'must contain {tx}'],
      [{ options: 'chainId=zero' }, 'chainId'],
      [{ options: 'no equals sign' }, 'Options takes key=value, not "no equals sign"'],
      [{ display_name: '' }, 'The display name is 1 to 64 characters'],
      [{ confirmations: 'three' }, 'Some fields need your attention'],
    ] as const) {
      const before = await snapshotOfChains()
      const response = await agent.post('/chains/ethereum', await chainForm('ethereum', changes))
      assert.equal(response.status, 302, JSON.stringify(changes))
      assert.equal(response.location, '/admin/chains/ethereum')
      const page = await agent.follow(response.location!)
      assert.include(pageText(page.text), message, JSON.stringify(changes))
      assert.equal(
        await snapshotOfChains(),
        before,
        `nothing written for ${JSON.stringify(changes)}`
      )
    }
  })

  test('after a refusal the URLs sent are shown again with their keys masked', async ({
    assert,
  }) => {
    const agent = await signedIn()
    await agent.get('/chains/ethereum')
    const otherKey = 'fedcba9876543210fedcba9876543210'
    const response = await agent.post(
      '/chains/ethereum',
      await chainForm('ethereum', {
        rpc_urls: `https://eth.example/v2/${otherKey}`,
        confirmations: '5000',
      })
    )
    const page = await agent.follow(response.location!)
    assert.include(pageText(page.text), 'Confirmations must be a whole number from 0 to 1000')
    assert.include(page.text, 'https://eth.example/v2/***</textarea>')
    assert.notInclude(page.text, otherKey)
  })

  test('enable and disable, from the list or the page', async ({ assert }) => {
    const agent = await signedIn()
    await agent.get('/chains')
    const off = await agent.post('/chains/bsc/disable')
    assert.equal(off.location, '/admin/chains')
    assert.isFalse((await Chain.findByOrFail('network', 'bsc')).enabled)
    assert.include(
      pageText((await agent.follow(off.location!)).text),
      'BNB Smart Chain is disabled'
    )
    await agent.get('/chains/bsc')
    const on = await agent.post('/chains/bsc/enable')
    assert.equal(on.location, '/admin/chains/bsc')
    assert.isTrue((await Chain.findByOrFail('network', 'bsc')).enabled)
    assert.equal(await countRows('audit_log', { action: 'chain.update', subject_id: 'bsc' }), 2)
    assert.equal((await agent.post('/chains/nowhere/enable')).status, 404)
  })

  test('tokens: add, refuse a bad contract or a taken symbol, edit, enable and disable', async ({
    assert,
  }) => {
    const agent = await signedIn()
    await agent.get('/chains/ethereum')
    const added = await agent.post('/chains/ethereum/tokens', {
      symbol: 'dai',
      contract: DAI.toLowerCase(),
      decimals: '18',
      precision: '2',
    })
    assert.equal(added.location, '/admin/chains/ethereum')
    assert.include(
      pageText((await agent.follow(added.location!)).text),
      `DAI was added to ethereum (${DAI}).`
    )
    const dai = await Token.query()
      .where('network', 'ethereum')
      .where('symbol', 'DAI')
      .firstOrFail()
    assert.equal(dai.contract, DAI, 'stored in its checksummed form')

    for (const [fields, message] of [
      [
        { symbol: 'BAD', contract: '0x1234', decimals: '18', precision: '2' },
        'is not an EVM address',
      ],
      [
        { symbol: 'DAI', contract: DAI, decimals: '18', precision: '2' },
        'DAI is already a token of ethereum',
      ],
      [
        { symbol: 'WEI', native: '1', contract: DAI, decimals: '18', precision: '2' },
        'Give either a contract or "native coin", not both',
      ],
      [
        { symbol: 'NONE', decimals: '18', precision: '2' },
        'Give the token contract, or tick "native coin"',
      ],
      [
        { symbol: 'ODD', native: '1', decimals: '1', precision: '2' },
        "cannot exceed the token's decimals",
      ],
      [
        { symbol: 'BIG', native: '1', decimals: '18', precision: '9' },
        'The amount precision must be a whole number from 2 to 6',
      ],
    ] as const) {
      const before = await snapshotOfChains()
      const refused = await agent.post('/chains/ethereum/tokens', fields)
      assert.include(pageText((await agent.follow(refused.location!)).text), message)
      assert.equal(await snapshotOfChains(), before)
    }

    const page = await agent.get('/chains/ethereum/tokens/DAI')
    assert.equal(page.status, 200)
    assert.include(page.text, DAI)
    await agent.post('/chains/ethereum/tokens/DAI', {
      contract: DAI,
      decimals: '18',
      precision: '4',
    })
    assert.equal((await dai.refresh()).amountPrecision, 4)

    await agent.get('/chains/ethereum')
    await agent.post('/chains/ethereum/tokens/DAI/disable')
    assert.isFalse((await dai.refresh()).enabled)
    await agent.post('/chains/ethereum/tokens/dai/enable')
    assert.isTrue((await dai.refresh()).enabled)
    assert.deepEqual(
      (await db.from('audit_log').where('subject_id', 'ethereum/DAI').orderBy('id')).map(
        (row) => row.action
      ),
      ['token.create', 'token.update', 'token.update', 'token.update']
    )
  })

  test('the plugins page: every plugin, on, with its families, networks and routes', async ({
    assert,
  }) => {
    const agent = await signedIn()
    const page = await agent.get('/plugins')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    for (const name of [
      'tron',
      'evm',
      'solana',
      'ton',
      'provider',
      'compat',
      'telegram',
      'email',
      'webhook',
      'rate_coingecko',
      'rate_binance',
      'rate_okx',
      'rate_coinbase',
      'rate_kraken',
      'rate_frankfurter',
      'rate_json',
    ])
      assert.include(page.text, `id="plugin-${name}"`)
    assert.include(
      text,
      'Networks: ethereum bsc polygon plasma arbitrum base optimism avalanche xlayer'
    )
    assert.include(page.text, 'href="/admin/chains/plasma"')
    assert.include(text, 'POST /payments/provider/v1/notify')
    assert.include(text, 'GET, POST /payments/compat/v1/order/create-transaction/submit.php')
    assert.include(text, 'provider.shop_token')
    assert.include(text, 'Notification channels telegram')
    assert.lengthOf(page.text.match(/class="badge badge-success">Loaded</g) ?? [], 16)
    assert.notInclude(page.text, '>Off<')
  })
})

test.group('Console chains: test connection', (group) => {
  const anvil = new Anvil()
  group.setup(async () => {
    await anvil.start()
    return () => anvil.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    RpcPool.reset()
  })

  test('shows the head of each endpoint, or why one failed', async ({ assert }) => {
    await anvil.mine(2)
    const head = await anvil.client.getBlockNumber()
    const closed = CLOSED_URL
    await chainAdmin.set('ethereum', { rpcUrls: [anvil.url, closed] })
    const agent = await signedIn()
    await agent.get('/chains/ethereum')
    const response = await agent.post('/chains/ethereum/test')
    assert.equal(response.location, '/admin/chains/ethereum')
    const text = pageText((await agent.follow(response.location!)).text)
    assert.include(text, `${anvil.url} Answered block ${head}`)
    assert.include(
      text,
      `${closed} Failed connection refused (is the node running, is the port right?)`
    )
    assert.include(text, '1 of 2 RPC endpoint(s) of ethereum did not answer.')
    // Shown once: a reload does not ask the nodes again.
    assert.notInclude(pageText((await agent.get('/chains/ethereum')).text), 'Connection test')
  })

  test('refused with a message when there is nothing to test', async ({ assert }) => {
    await chainAdmin.set('ethereum', { rpcUrls: [] })
    const agent = await signedIn()
    await agent.get('/chains/ethereum')
    const response = await agent.post('/chains/ethereum/test')
    assert.include(
      pageText((await agent.follow(response.location!)).text),
      'ethereum has no RPC endpoint to test: add one first'
    )
  })
})

test.group('Console chains: viewers and forged forms', (group) => {
  group.each.setup(() => resetDatabase())

  test('a viewer gets 403 on every POST, and nothing is written', async ({ assert }) => {
    const viewer = await signedIn('viewer')
    await viewer.get('/chains/ethereum')
    const before = await snapshotOfChains()
    for (const [path, fields] of [
      ['/chains/ethereum', await chainForm('ethereum', { confirmations: '99' })],
      ['/chains/ethereum/enable', {}],
      ['/chains/ethereum/disable', {}],
      ['/chains/ethereum/test', {}],
      ['/chains/ethereum/tokens', { symbol: 'DAI', contract: DAI, decimals: '18', precision: '2' }],
      [
        '/chains/ethereum/tokens/USDT',
        { contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: '6', precision: '4' },
      ],
      ['/chains/ethereum/tokens/USDT/enable', {}],
      ['/chains/ethereum/tokens/USDT/disable', {}],
    ] as const) {
      const response = await viewer.post(path, fields)
      assert.equal(response.status, 403, path)
    }
    assert.equal(await snapshotOfChains(), before)
  })

  test('a form without its CSRF token is refused with 403', async ({ assert }) => {
    const agent = await signedIn()
    await agent.get('/chains')
    const response = await agent.post('/chains/bsc/disable', {}, { csrf: null })
    assert.equal(response.status, 403)
    assert.isTrue((await Chain.findByOrFail('network', 'bsc')).enabled)
  })
})
