import { test } from '@japa/runner'
import { RpcPool, RpcUnavailableError } from '#chains/rpc_pool'
import { maskSecret, redactSecrets, redactUrl, serializeError } from '#support/http/redaction'

const INFURA_KEY = '9aa3d95b3bc440fa88ea12eaa4456161'
const ALCHEMY_KEY = 'Xk3t_vR9pQ2-mN8bL4cJ7wZ1aS6dF0gH'

test.group('Redaction of secrets', () => {
  test('key-bearing RPC URLs are masked, their other parts kept', ({ assert }) => {
    const infura = redactUrl(`https://mainnet.infura.io/v3/${INFURA_KEY}`)
    assert.equal(infura, 'https://mainnet.infura.io/v3/***')
    const alchemy = redactUrl(`https://eth-mainnet.g.alchemy.com/v2/${ALCHEMY_KEY}`)
    assert.equal(alchemy, 'https://eth-mainnet.g.alchemy.com/v2/***')
    const query = redactUrl('https://rpc.example/solana?api-key=abc123secret&network=mainnet')
    assert.equal(query, 'https://rpc.example/solana?api-key=***&network=mainnet')
    const userinfo = redactUrl('https://user:hunter2pass@rpc.example/jsonRPC')
    assert.notInclude(userinfo, 'hunter2pass')
    assert.notInclude(userinfo, 'user:')
    assert.equal(redactUrl('https://api.trongrid.io'), 'https://api.trongrid.io')
    assert.equal(redactUrl('not a url'), 'not a url')
  })

  test('URLs inside a text are masked, and known secrets wherever they appear', ({ assert }) => {
    const text = `HTTP request failed.\nURL: https://mainnet.infura.io/v3/${INFURA_KEY}\nDetails: fetch failed`
    const redacted = redactSecrets(text)
    assert.notInclude(redacted, INFURA_KEY)
    assert.include(redacted, 'https://mainnet.infura.io/v3/***')
    assert.include(redacted, 'Details: fetch failed')

    assert.equal(
      redactSecrets('header TRON-PRO-API-KEY=tron-key-42 refused', ['tron-key-42']),
      'header TRON-PRO-API-KEY=*** refused'
    )
  })

  test('a logged error keeps type, message and stack, masked, and drops attached objects', ({
    assert,
  }) => {
    const error = Object.assign(new Error(`GET https://rpc.example/v2/${ALCHEMY_KEY} failed`), {
      code: 'ECONNRESET',
      config: { headers: { 'X-API-Key': 'header-secret-value' } },
    })
    const logged = JSON.stringify(serializeError(error))
    assert.notInclude(logged, ALCHEMY_KEY)
    assert.notInclude(logged, 'header-secret-value')
    assert.include(logged, 'ECONNRESET')
    assert.include(logged, '"type":"Error"')
  })

  test('a secret is shown by its last 4 characters at most', ({ assert }) => {
    assert.equal(maskSecret('test-secret-0123456789abcdef'), '…cdef')
    assert.equal(maskSecret('short-key'), '***')
    assert.equal(maskSecret(''), '')
  })

  test('an RPC pool failure names no key of the endpoint nor the API key', async ({ assert }) => {
    const url = `https://mainnet.infura.io/v3/${INFURA_KEY}?api-key=queryKey1234567`
    const pool = new RpcPool([url], { cooldownMs: 1, timeoutMs: 1000, apiKey: 'header-key-0042' })
    const failure = await pool
      .call(async (target) => {
        throw new Error(`request to ${target} refused for key header-key-0042`, {
          cause: new Error(`at ${target}`),
        })
      })
      .catch((error) => error)
    assert.instanceOf(failure, RpcUnavailableError)
    assert.notInclude(failure.message, INFURA_KEY)
    assert.notInclude(failure.message, 'queryKey1234567')
    assert.notInclude(failure.message, 'header-key-0042')
    assert.include(failure.message, 'mainnet.infura.io')
    assert.notInclude(JSON.stringify(RpcPool.health(url)), INFURA_KEY)
    // As logged, its cause included.
    const logged = JSON.stringify(serializeError(failure, pool.secrets))
    assert.include(logged, 'at https://mainnet.infura.io')
    for (const secret of [INFURA_KEY, 'queryKey1234567', 'header-key-0042'])
      assert.notInclude(logged, secret)
  })
})
