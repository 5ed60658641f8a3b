import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import { RpcPool } from '#chains/rpc_pool'
import chainAdmin from '#services/operators/chain_admin'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { CLOSED_URL } from '#tests/helpers/processes'
import { HttpStub } from '#tests/helpers/http_stub'
import { Anvil } from '#tests/helpers/evm/anvil'

/** anvil's own chain id. */
const ANVIL_CHAIN_ID = 31337

async function signedIn(role: 'admin' | 'viewer' = 'admin') {
  const user = await createAdminUser({ role })
  return { agent: await AdminAgent.signIn(user), email: user.email }
}

/** What a refusal must leave as it was: the chains, tokens, endpoints' memory and the audit log. */
async function snapshot() {
  return JSON.stringify([
    await db.from('chains').orderBy('id').select('*'),
    await db.from('tokens').orderBy('id').select('*'),
    await db.from('rpc_endpoints').select('*'),
    await countRows('audit_log'),
  ])
}

/** The add-network form as an admin fills it in, with `changes`. */
function networkForm(rpcUrl: string, changes: Record<string, string> = {}) {
  return {
    network: 'devnet',
    family: 'evm',
    display_name: 'Dev net',
    rpc_url: rpcUrl,
    option_evm_chainId: String(ANVIL_CHAIN_ID),
    confirmations: '2',
    block_time: '1',
    scan_interval: '',
    explorer_tx_url: '',
    // As the form writes it: a refusal comes back to the form.
    _back: '/admin/chains#add-network',
    ...changes,
  }
}

/** The message shown under a field of the form, or null. */
function fieldError(html: string, field: string): string | null {
  const match = new RegExp(`<p class="field-error" id="f-${field}-error">([^<]*)</p>`).exec(html)
  return match ? pageText(match[1]) : null
}

test.group('Console: add a network of an installed family', (group) => {
  const anvil = new Anvil()
  const fake = new HttpStub()
  let closedUrl = ''
  group.setup(async () => {
    await anvil.start(ANVIL_CHAIN_ID)
    await fake.start()
    closedUrl = CLOSED_URL
    return async () => {
      await fake.stop()
      await anvil.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    RpcPool.reset()
  })

  test('the form offers the installed families that can test an endpoint, the chain id under evm only', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    const page = await agent.get('/chains')
    assert.equal(page.status, 200)
    const form = /<form[^>]*id="add-network-form"[\s\S]*?<\/form>/.exec(page.text)?.[0] ?? ''
    assert.include(form, 'action="/admin/chains"')
    for (const family of ['tron', 'evm', 'solana', 'ton'])
      assert.match(form, new RegExp(`<option value="${family}"`))
    assert.match(form, /<fieldset class="network-options" data-family="evm">/)
    assert.include(form, 'name="option_evm_chainId"')
    assert.notMatch(form, /data-family="(tron|solana|ton)"/)
    assert.include(form, 'name="_back" value="/admin/chains#add-network"')
  })

  test('an endpoint serving the chain id given: the network is added, enabled, audited as the admin', async ({
    assert,
  }) => {
    const { agent, email } = await signedIn()
    await agent.get('/chains')
    const response = await agent.post('/chains', networkForm(anvil.url))
    assert.equal(response.status, 302)
    assert.equal(response.location, '/admin/chains/devnet')
    const text = pageText((await agent.follow(response.location!)).text)
    assert.include(
      text,
      'Dev net (devnet) was added: its RPC endpoint answered for it. Add its tokens and a wallet: then it is offered to payers.'
    )

    const chain = await Chain.findByOrFail('network', 'devnet')
    assert.equal(chain.family, 'evm')
    assert.equal(chain.displayName, 'Dev net')
    assert.deepEqual(chain.options, { chainId: ANVIL_CHAIN_ID })
    assert.deepEqual(chain.rpcUrls, [anvil.url])
    assert.equal(chain.confirmations, 2)
    assert.equal(chain.blockTimeMs, 1000)
    assert.equal(chain.scanIntervalSeconds, 1, 'a blank interval is the block time')
    assert.isTrue(chain.enabled)
    const last = await Chain.query().orderBy('sort_order', 'desc').firstOrFail()
    assert.equal(last.network, 'devnet')

    const audit = await db.from('audit_log').where('subject_id', 'devnet')
    assert.lengthOf(audit, 1)
    assert.equal(audit[0].action, 'chain.create')
    assert.equal(audit[0].subject_type, 'chain')
    assert.equal(audit[0].actor, email)

    // Its page works like any other chain's; the name is taken from now on.
    assert.equal((await agent.get('/chains/devnet')).status, 200)
    await agent.get('/chains')
    const again = await agent.post('/chains', networkForm(anvil.url))
    assert.equal(again.location, '/admin/chains#add-network')
    assert.equal(
      fieldError((await agent.get('/chains')).text, 'network'),
      'devnet exists already: change it on its page or with chain:set devnet'
    )
  })

  test('refused at its field with nothing written: another chain id, no answer, an error in HTTP 200, not JSON', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    const before = await snapshot()
    const cases: { name: string; form: Record<string, string>; field: string; message: RegExp }[] =
      [
        {
          name: 'an endpoint of another chain',
          form: networkForm(anvil.url, { option_evm_chainId: '42161' }),
          field: 'option_evm_chainId',
          message: new RegExp(
            `^${anvil.url}: the endpoint serves chain id 31337, not 42161\\. Nothing was added: check the chain id or the URL\\.$`
          ),
        },
        {
          name: 'an unreachable URL',
          form: networkForm(closedUrl),
          field: 'rpc_url',
          message: new RegExp(
            `^${closedUrl} did not answer: connection refused \\(is the node running, is the port right\\?\\)\\. Nothing was added\\.$`
          ),
        },
        {
          name: 'a JSON-RPC error in HTTP 200',
          form: networkForm(`${fake.url}/rpc-error`),
          field: 'rpc_url',
          message: new RegExp(
            `^${fake.url}/rpc-error did not answer: .*invalid project id.*\\. Nothing was added\\.$`
          ),
        },
        {
          name: 'one JSON-RPC error in HTTP 200 for a whole batch',
          form: networkForm(`${fake.url}/batch-error`),
          field: 'rpc_url',
          message: new RegExp(
            `^${fake.url}/batch-error did not answer: .*invalid project id.*\\. Nothing was added\\.$`
          ),
        },
        {
          name: 'an answer that is not JSON',
          form: networkForm(`${fake.url}/html`),
          field: 'rpc_url',
          message: new RegExp(
            `^${fake.url}/html did not answer: the answer is not JSON \\(is this URL the node’s JSON-RPC endpoint\\?\\)\\. Nothing was added\\.$`
          ),
        },
        {
          name: 'no chain id',
          form: networkForm(anvil.url, { option_evm_chainId: '' }),
          field: 'option_evm_chainId',
          message: /^Give the chain id of devnet: the endpoint is checked against it$/,
        },
        {
          name: 'a chain id that is not a number',
          form: networkForm(anvil.url, { option_evm_chainId: 'arb' }),
          field: 'option_evm_chainId',
          message: /^EVM option chainId must be a whole number from 1 to \d+, not "arb"$/,
        },
        {
          name: 'a name taken by a seeded network',
          form: networkForm(anvil.url, { network: 'ethereum' }),
          field: 'network',
          message: /^ethereum exists already: change it on its page or with chain:set ethereum$/,
        },
        {
          name: "the hosted provider's channel name",
          form: networkForm(anvil.url, { network: 'provider' }),
          field: 'network',
          message:
            /^"provider" is the name of a payment channel \(a hosted provider\): choose another network name$/,
        },
        {
          name: 'a name that is not one',
          form: networkForm(anvil.url, { network: 'Dev Net!' }),
          field: 'network',
          message: /^A network name is 1 to 32 lower-case letters, digits or "-"$/,
        },
        {
          name: 'no URL scheme',
          form: networkForm('127.0.0.1:8545'),
          field: 'rpc_url',
          message: /^"127\.0\.0\.1:8545" is not a URL$/,
        },
      ]
    fake.handler = (request, response, body) => {
      if (request.url === '/html') {
        response.writeHead(200, { 'content-type': 'text/html' })
        response.end('<html><body>Welcome to nginx!</body></html>')
        return
      }
      // A provider refusing the key, as JSON-RPC errors come: in HTTP 200,
      // one per call of a batch (/rpc-error), or one for the whole batch
      // (/batch-error: some gateways answer so).
      const error = { code: -32002, message: 'invalid project id' }
      const calls = JSON.parse(body)
      const answer =
        Array.isArray(calls) && request.url !== '/batch-error'
          ? calls.map((call: { id: number }) => ({ jsonrpc: '2.0', id: call.id, error }))
          : { jsonrpc: '2.0', id: null, error }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(answer))
    }
    for (const { name, form, field, message } of cases) {
      await agent.get('/chains')
      const response = await agent.post('/chains', form)
      assert.equal(response.status, 302, name)
      assert.equal(response.location, '/admin/chains#add-network', name)
      const page = await agent.get('/chains')
      const shown = fieldError(page.text, field)
      assert.match(shown ?? '(no message at the field)', message, name)
      assert.match(
        page.text,
        new RegExp(
          `id="f-${field}"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*id="f-${field}"`
        ),
        `${name}: the field is marked invalid`
      )
      assert.include(pageText(page.text), 'Some fields need your attention', name)
      // What was typed is kept, to correct it.
      assert.include(page.text, 'value="Dev net"', name)
      assert.equal(await snapshot(), before, `${name}: nothing written`)
    }
    assert.isAbove(fake.requests.length, 0, 'the fake endpoint was asked')
  })

  test('a key in the URL is never shown again: the kept URL is masked', async ({ assert }) => {
    const { agent } = await signedIn()
    await agent.get('/chains')
    const keyed = `${closedUrl}/v3/0123456789abcdef0123456789abcdef`
    const response = await agent.post('/chains', networkForm(keyed))
    assert.equal(response.location, '/admin/chains#add-network')
    const page = await agent.get('/chains')
    assert.notInclude(page.text, '0123456789abcdef0123456789abcdef')
    assert.include(page.text, `value="${closedUrl}/v3/***"`)
  })

  test('the connection test of a saved chain names an endpoint that serves another chain', async ({
    assert,
  }) => {
    const chains = chainAdmin
    await chains.set('base', { rpcUrls: [anvil.url] })
    const result = await chains.testConnection('base')
    assert.isFalse(result.ok)
    assert.lengthOf(result.endpoints, 1)
    assert.deepInclude(result.endpoints[0], {
      url: anvil.url,
      ok: false,
      error: 'the endpoint serves chain id 31337, not 8453',
      mismatch: 'chainId',
    })
    assert.equal(result.endpoints[0].head?.kind, 'block', 'its head is shown all the same')

    const { agent } = await signedIn()
    await agent.get('/chains/base')
    const response = await agent.post('/chains/base/test')
    const text = pageText((await agent.follow(response.location!)).text)
    assert.include(text, `${anvil.url} Failed the endpoint serves chain id 31337, not 8453`)
  })

  test('a viewer sees no form and gets 403 for a POST; nothing is written', async ({ assert }) => {
    const { agent } = await signedIn('viewer')
    const page = await agent.get('/chains')
    assert.equal(page.status, 200)
    assert.notInclude(page.text, 'add-network-form')
    assert.notInclude(pageText(page.text), 'Add a network')
    const before = await snapshot()
    const response = await agent.post('/chains', networkForm(anvil.url))
    assert.equal(response.status, 403)
    assert.isNull(await Chain.findBy('network', 'devnet'))
    assert.equal(await snapshot(), before)
  })
})
