import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { ChainOverview } from '#services/operators/chain_overview'
import { RpcPool, nextUtcMidnight } from '#chains/rpc_pool'
import { DatabaseEndpointMemory, endpointKey } from '#chains/endpoint_memory'
import { SecretPurpose, sealSecret } from '#support/crypto/secret_box'
import { utcMinute, utcSecond } from '#services/admin/admin_format'
import { resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { LimitedEndpoint } from '#tests/helpers/limited_endpoint'
import { runAce } from '#tests/helpers/processes'

const API_KEY = 'endpoint-key-abcdefghijklmnop-0042'
const INFURA_KEY = '0123456789abcdef0123456789abcdef'
const INFURA_URL = `https://mainnet.infura.io/v3/${INFURA_KEY}`
const MASKED_INFURA = 'https://mainnet.infura.io/v3/***'

async function signedIn(role: 'admin' | 'viewer' = 'admin') {
  return AdminAgent.signIn(await createAdminUser({ role }))
}

/** The remembered row of an endpoint of the chain's key. */
async function remembered(url: string) {
  return db.from('rpc_endpoints').where('endpoint_key', endpointKey(url, API_KEY)).first()
}

/**
 * The chain page's "RPC endpoints" card: what the runs remember of each
 * endpoint (rpc_endpoints, written by the pool itself here: HTTP 402 from
 * one stub, a long Retry-After from another), with the URLs masked.
 */
test.group('Console chains: the state of each RPC endpoint', (group) => {
  const endpoints: LimitedEndpoint[] = []
  group.each.setup(async () => {
    await resetDatabase()
    RpcPool.reset()
    return async () => {
      for (const endpoint of endpoints.splice(0)) await endpoint.stop()
      RpcPool.reset()
    }
  })

  test('HTTP 402 and a long Retry-After hold their endpoints; the page says until when, the third serves; the log range learned is shown', async ({
    assert,
  }) => {
    const [credits, limited, fine] = await Promise.all(
      [0, 1, 2].map(() => new LimitedEndpoint(100, 100).start())
    )
    endpoints.push(credits, limited, fine)
    credits.script = [{ status: 402 }]
    limited.script = [{ status: 429, retryAfter: '3600' }]
    const urls = [credits.url, limited.url, fine.url]
    await chainAdmin.set('ethereum', { rpcUrls: urls, apiKey: API_KEY })

    // A run of the scanner, as rpcFor() makes its pool: the database remembers what the endpoints asked for.
    const memory = await DatabaseEndpointMemory.load('ethereum', urls, API_KEY)
    const pool = new RpcPool(urls, {
      timeoutMs: 5_000,
      cooldownMs: 30_000,
      apiKey: API_KEY,
      network: 'ethereum',
      memory,
    })
    const before = Date.now()
    const answer = await pool.call((url) =>
      pool.fetch(url, { method: 'POST', body: '{}' }).then((response) => response.json())
    )
    assert.deepEqual(answer, { jsonrpc: '2.0', id: 1, result: 'ok' })
    pool.rememberLogRange(fine.url, 2_000)
    await memory.settled()

    const creditsRow = await remembered(credits.url)
    const limitedRow = await remembered(limited.url)
    assert.equal(creditsRow.hold_kind, 'credits')
    assert.oneOf(Number(creditsRow.hold_until), [nextUtcMidnight(before), nextUtcMidnight()])
    assert.equal(limitedRow.hold_kind, 'rate_limited')
    assert.isAtLeast(Number(limitedRow.hold_until), before + 3_600_000)

    const [chain] = (await new ChainOverview().all()).filter(
      (entry) => entry.network === 'ethereum'
    )
    assert.deepEqual(
      chain.endpoints.map((endpoint) => [
        endpoint.url,
        endpoint.state,
        endpoint.heldUntil,
        endpoint.logRange,
        endpoint.lastHold,
      ]),
      [
        [credits.url, 'credits', Number(creditsRow.hold_until), null, null],
        [limited.url, 'rate_limited', Number(limitedRow.hold_until), null, null],
        [fine.url, 'fine', null, 2_000, null],
      ]
    )
    assert.match(
      chain.endpoints[0].holdReason,
      /daily credits are spent \(HTTP 402\) until 00:00 UTC/
    )
    assert.match(chain.endpoints[1].holdReason, /rate limited: it asked for 3600 s \(Retry-After\)/)
    // What the state does not say already.
    assert.equal(chain.endpoints[1].holdDetail, 'It asked for 3600 s (Retry-After)')
    assert.match(chain.endpoints[0].holdDetail, /^HTTP 402/)

    const agent = await signedIn()
    const page = pageText((await agent.get('/chains/ethereum')).text)
    assert.include(page, 'RPC endpoints 3 endpoints 2 held')
    assert.include(
      page,
      `${credits.url} Daily credits spent Daily credits spent (HTTP 402) until 00:00 UTC (${utcMinute(Number(creditsRow.hold_until))}): not asked before then.`
    )
    assert.include(
      page,
      `${limited.url} Rate limited Held until ${utcSecond(Number(limitedRow.hold_until))}: it asked to wait longer than a request may.`
    )
    assert.include(
      page,
      `${fine.url} Available Log queries: up to 2,000 blocks (it refused a wider range)`
    )
    assert.notInclude(page, 'Every RPC endpoint is held')

    // The list points at the held ones.
    const list = await agent.get('/chains')
    assert.include(pageText(list.text), '3 endpoints 2 held RPC endpoints of ethereum')
    assert.include(list.text, 'href="/admin/chains/ethereum#endpoints"')

    // The next run does not ask the held endpoints (another pool, the same memory).
    const next = new RpcPool(urls, {
      timeoutMs: 5_000,
      cooldownMs: 30_000,
      apiKey: API_KEY,
      network: 'ethereum',
      memory: await DatabaseEndpointMemory.load('ethereum', urls, API_KEY),
    })
    RpcPool.reset()
    await next.call((url) => next.fetch(url, { method: 'POST', body: '{}' }))
    assert.deepEqual(
      [credits.log.length, limited.log.length, fine.log.length],
      [1, 1, 2],
      'held endpoints are not asked again'
    )
  }).timeout(60_000)

  test('every endpoint held: the status says the chain is not scanned before the first hold ends; keys masked everywhere', async ({
    assert,
  }) => {
    const second = 'https://eth-mainnet.example.net/rpc'
    await chainAdmin.set('ethereum', { rpcUrls: [INFURA_URL, second], apiKey: API_KEY })
    const memory = await DatabaseEndpointMemory.load('ethereum', [INFURA_URL, second], API_KEY)
    const midnight = nextUtcMidnight()
    const soon = Date.now() + 20 * 60_000
    memory.remember(INFURA_URL, {
      holdUntil: midnight,
      holdKind: 'credits',
      // A reason quoting the keyed URL (the pool redacts it already; the page does not count on it).
      holdReason: `its daily credits are spent (HTTP 402) until 00:00 UTC: HTTP 402 from ${INFURA_URL} key ${API_KEY}`,
      logRange: null,
    })
    memory.remember(second, {
      holdUntil: soon,
      holdKind: 'rate_limited',
      holdReason: 'rate limited: it asked for 1200 s (Retry-After)',
      logRange: null,
    })
    await memory.settled()

    for (const role of ['admin', 'viewer'] as const) {
      const response = await (await signedIn(role)).get('/chains/ethereum')
      const page = pageText(response.text)
      assert.include(page, `${MASKED_INFURA} Daily credits spent`)
      assert.include(page, `HTTP 402 from ${MASKED_INFURA} key ***`)
      assert.include(
        page,
        `Every RPC endpoint is held: Ethereum is not scanned before ${utcMinute(Math.min(midnight, soon))}.`
      )
      assert.notInclude(response.text, INFURA_KEY)
      assert.notInclude(response.text, API_KEY)
      assert.include(page, `Its answer: HTTP 402 from ${MASKED_INFURA} key ***`)
      // No range learned: none said.
      assert.notInclude(page, 'Log queries')
    }

    // chain:list says it too, a line per held endpoint, keys masked.
    const listed = await runAce(['chain:list'])
    assert.equal(listed.code, 0, listed.stderr)
    const output = listed.stdout + listed.stderr
    assert.include(
      output,
      `ethereum: ${MASKED_INFURA} is not asked until ${new Date(midnight).toISOString()}: its daily credits are spent (HTTP 402)`
    )
    assert.include(
      output,
      `ethereum: ${second} is not asked until ${new Date(soon).toISOString()}: it asked to wait (Retry-After)`
    )
    assert.notInclude(output, INFURA_KEY)
  }).timeout(60_000)

  test('a hold that is over shows the endpoint available, with the hold it had; another API key is another endpoint', async ({
    assert,
  }) => {
    const url = 'https://eth-mainnet.example.net/rpc'
    await chainAdmin.set('ethereum', { rpcUrls: [url], apiKey: API_KEY })
    const ended = Date.now() - 60_000
    const memory = await DatabaseEndpointMemory.load('ethereum', [url], API_KEY)
    memory.remember(url, {
      holdUntil: ended,
      holdKind: 'credits',
      holdReason: 'its daily credits are spent (HTTP 402) until 00:00 UTC',
      logRange: 500,
    })
    // The same URL under another key (before a key change): not this endpoint.
    const other = await DatabaseEndpointMemory.load('ethereum', [url], 'another-key-0000')
    other.remember(url, {
      holdUntil: Date.now() + 3_600_000,
      holdKind: 'rate_limited',
      holdReason: 'rate limited',
      logRange: null,
    })
    await Promise.all([memory.settled(), other.settled()])

    const page = pageText((await (await signedIn()).get('/chains/ethereum')).text)
    assert.include(
      page,
      `${url} Available Was held until ${utcMinute(ended)} (daily credits spent). Log queries: up to 500 blocks`
    )
    assert.include(page, 'RPC endpoints 1 endpoint')
    assert.notInclude(page, 'Every RPC endpoint is held')
    assert.notInclude(page, 'Rate limited')
  })

  test('ranges learned one after another are written in that order: the last one is kept, whichever write is slower', async ({
    assert,
  }) => {
    const url = 'https://eth-mainnet.example.net/rpc'
    const memory = await DatabaseEndpointMemory.load('ethereum', [url], API_KEY)
    // The first write this memory sends takes 300 ms longer than the others (a busy connection):
    // sent side by side, the later widths would land first and the first one last.
    const connection = db.connection.bind(db)
    let writes = 0
    db.connection = ((...args: Parameters<typeof db.connection>) => {
      const client = connection(...args)
      const delay = writes++ === 0 ? 300 : 0
      return new Proxy(client, {
        get(target, property) {
          if (property !== 'knexQuery') return Reflect.get(target, property)
          return () => {
            const query = target.knexQuery()
            const then = query.then.bind(query)
            query.then = ((onDone: any, onError: any) =>
              new Promise((resolve) => setTimeout(resolve, delay)).then(() =>
                then(onDone, onError)
              )) as typeof query.then
            return query
          }
        },
      })
    }) as typeof db.connection
    try {
      for (const width of [60, 30, 15])
        memory.remember(url, { holdUntil: 0, holdKind: null, holdReason: '', logRange: width })
      await memory.settled()
    } finally {
      db.connection = connection
    }
    assert.equal((await remembered(url)).log_range, 15)
    assert.isAtMost(writes, 3)
  })

  test('no endpoint: said plainly; an API key the APP_KEY cannot read: the state is unknown, not "available"', async ({
    assert,
  }) => {
    await chainAdmin.set('ethereum', { rpcUrls: [] })
    const agent = await signedIn()
    assert.include(
      pageText((await agent.get('/chains/ethereum')).text),
      'No RPC endpoint is set: Ethereum cannot be scanned. Add one under Settings.'
    )

    await chainAdmin.set('ethereum', { rpcUrls: ['https://eth-mainnet.example.net/rpc'] })
    await db
      .from('chains')
      .where('network', 'ethereum')
      .update({ api_key: sealSecret('sealed-for-something-else', SecretPurpose.setting('x')) })
    const [chain] = (await new ChainOverview().all()).filter(
      (entry) => entry.network === 'ethereum'
    )
    assert.equal(chain.endpoints[0].state, 'unknown')
    const page = pageText((await agent.get('/chains/ethereum')).text)
    assert.include(page, 'Unknown The API key cannot be read (APP_KEY changed?)')
  })
})
