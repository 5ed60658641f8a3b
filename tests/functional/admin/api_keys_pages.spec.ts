import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import ApiKey from '#models/api_key'
import settings from '#settings/settings_service'
import { AdminAgent, createAdminUser, pageText, type AdminUser } from '#tests/helpers/admin'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { CREATE_PATH, TEST_SECRET, orderParams, signed } from '#tests/helpers/merchant'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { merchantForGroup } from '#tests/helpers/merchant_group'
import { makeTronPayable } from '#tests/helpers/setup'
import { SECRET_VARIABLE } from '#services/admin/integration_examples'
import { runProgram, scratchDirectory } from '#tests/helpers/example_programs'
import Order from '#models/order'
import configCache from '#services/config_cache'

let admin: AdminUser
let viewer: AdminUser

async function asAdmin() {
  return AdminAgent.signIn(admin)
}

/** The whole table, to tell that a refused action wrote nothing. */
async function keysTable() {
  return JSON.stringify(await db.from('api_keys').orderBy('id'))
}

/** A native create request signed with `secret` for `pid`: the gateway's answer status. */
async function apiStatus(pid: string, secret: string) {
  const response = await fetch(`${process.env.APP_URL}${CREATE_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'accept': 'application/json' },
    body: JSON.stringify(
      signed(orderParams({ pid, token: undefined, network: undefined }), secret)
    ),
  })
  return response.status
}

/** The text of the element with this id, as a copy button copies it (HTML entities decoded). */
function elementText(html: string, id: string): string {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(pre|code)>`).exec(html)
  if (!match) throw new Error(`no element #${id}`)
  return match[1]
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&#x3D;/g, '=')
    .replace(/&#x60;/g, '`')
    .replace(/&amp;/g, '&')
}

/** Every stored audit row as text (masked secrets only). */
async function auditText() {
  return JSON.stringify(await db.from('audit_log').select('*'))
}

test.group('Console API keys: list, create, secret shown once', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    admin = await createAdminUser({ role: 'admin' })
    viewer = await createAdminUser({ role: 'viewer' })
  })

  test('the list: pid, note, status, allowed IPs, secret hint, last used and order counts', async ({
    assert,
  }) => {
    const agent = await asAdmin()
    await agent.submit(
      '/api-keys',
      { pid: 'shop-7', note: 'Second shop', ips: '203.0.113.7, 198.51.100.0/24' },
      '/api-keys/new'
    )
    ;(await agent.post('/api-keys/shop-7/disable')).status
    assert.equal(await apiStatus('1000', TEST_SECRET), 200)

    const page = await agent.get('/api-keys')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.include(text, 'pid Note Status Allowed IPs Secret Last used Orders Paid')
    assert.match(text, /1000 — Enabled any …cdef \d{4}-\d\d-\d\d \d\d:\d\d UTC 1 0/)
    assert.match(text, /shop-7 Second shop Disabled 203\.0\.113\.7 \+1 …\w{4} never 0 0/)
    assert.include(page.text, 'href="/admin/orders?pid=1000"')
    assert.include(page.text, 'href="/admin/api-keys/new"')
    assert.notInclude(page.text, TEST_SECRET)
  })

  test('create: the secret is on the answer page only, never on a later page nor in the audit log', async ({
    assert,
  }) => {
    const agent = await asAdmin()
    const form = await agent.get('/api-keys/new')
    assert.equal(form.status, 200)
    assert.include(pageText(form.text), 'Create an API key')

    const created = await agent.post('/api-keys', {
      pid: '',
      note: 'Main shop',
      ips: '203.0.113.7\n198.51.100.0/24',
    })
    assert.equal(created.status, 200)
    assert.equal(created.headers.get('cache-control'), 'no-store')
    const key = await ApiKey.findByOrFail('pid', '1001')
    const secret = key.signingSecret()
    assert.match(secret, /^[0-9a-f]{64}$/)
    assert.equal(elementText(created.text, 'key-secret'), secret)
    assert.equal(elementText(created.text, 'key-pid'), '1001')
    assert.include(created.text, 'data-copy="key-secret"')
    assert.include(pageText(created.text), 'it is shown only on this page')
    assert.deepEqual(
      [key.note, key.ipAllowlist, key.status],
      ['Main shop', '203.0.113.7,198.51.100.0/24', 'active']
    )

    for (const path of [
      '/api-keys',
      '/api-keys/1001',
      '/api-keys/1001/integration',
      '/audit',
      '/',
    ]) {
      const later = await agent.get(path)
      assert.notInclude(later.text, secret, path)
    }
    const audit = await auditText()
    assert.notInclude(audit, secret)
    const [row] = await db.from('audit_log').where('action', 'api_key.create')
    assert.equal(row.actor, admin.email)
    assert.equal(JSON.parse(row.after).secretKey, `…${secret.slice(-4)}`)

    // The secret it showed is the one that signs.
    assert.equal(await apiStatus('1001', secret), 401) // not from an allowed IP
    await db.from('api_keys').where('pid', '1001').update({ ip_allowlist: '' })
    // A write past the models is seen by the configuration cache within 2 s; no waiting here.
    configCache.invalidate()
    assert.equal(await apiStatus('1001', secret), 200)
  })

  test('create refusals: each shown at its field, the fields kept, nothing written', async ({
    assert,
  }) => {
    const agent = await asAdmin()
    const before = await keysTable()
    const cases: [Record<string, string>, string, string][] = [
      [
        { pid: '', note: 'A', ips: '203.0.113.7\n10.0.0.0/33' },
        'ips',
        '"10.0.0.0/33" is not an IP address or CIDR range',
      ],
      [
        { pid: 'a b', note: 'A', ips: '' },
        'pid',
        'The pid must be 1 to 32 letters, digits, "_" or "-"',
      ],
      [
        { pid: '', note: 'x'.repeat(256), ips: '' },
        'note',
        'The note must be at most 255 characters',
      ],
    ]
    for (const [fields, field, message] of cases) {
      const refused = await agent.submit(
        '/api-keys',
        { ...fields, _back: '/admin/api-keys/new' },
        '/api-keys/new'
      )
      assert.equal(refused.status, 302)
      assert.equal(refused.location, '/admin/api-keys/new')
      const page = await agent.get(refused.location!)
      assert.include(page.text, 'Some fields need your attention')
      const error = new RegExp(`id="f-${field}-error">([^<]*)<`).exec(page.text)
      assert.isNotNull(error, field)
      assert.include(pageText(error![1]), message)
      if (field === 'ips') assert.include(page.text, '10.0.0.0/33</textarea>')
    }
    // A pid taken: the service's refusal, flashed.
    const taken = await agent.submit(
      '/api-keys',
      { pid: '1000', note: '', ips: '', _back: '/admin/api-keys/new' },
      '/api-keys/new'
    )
    assert.equal(taken.location, '/admin/api-keys/new')
    assert.include(
      pageText((await agent.get('/api-keys/new')).text),
      'An API key with pid 1000 already exists'
    )
    assert.equal(await keysTable(), before)
    assert.equal(await countRows('audit_log', { action: 'api_key.create' }), 0)
  })

  test('a viewer sees the list and the key without any action, and every write is refused with 403', async ({
    assert,
  }) => {
    const agent = await AdminAgent.signIn(viewer)
    const list = await agent.get('/api-keys')
    assert.equal(list.status, 200)
    assert.notInclude(list.text, 'Create a key')
    const show = await agent.get('/api-keys/1000')
    assert.equal(show.status, 200)
    assert.notInclude(show.text, 'Rotate the secret')
    assert.notInclude(show.text, '/api-keys/1000/disable')
    const integration = await agent.get('/api-keys/1000/integration')
    assert.equal(integration.status, 200)
    assert.include(pageText(integration.text), 'Sending a test callback needs the admin role')

    const merchant = await new MerchantServer().start()
    try {
      await settings.set('callbacks.allow_private_targets', 'true')
      const before = await keysTable()
      const auditRows = await countRows('audit_log')
      const writes: [string, Record<string, string>][] = [
        ['/api-keys', { pid: '', note: 'x', ips: '' }],
        ['/api-keys/1000', { note: 'changed', ips: '10.0.0.1' }],
        ['/api-keys/1000/disable', {}],
        ['/api-keys/1000/enable', {}],
        ['/api-keys/1000/rotate', {}],
        ['/api-keys/1000/test-callback', { url: merchant.notifyUrl, format: 'native' }],
      ]
      for (const [path, fields] of writes) {
        const refused = await agent.post(path, fields)
        assert.equal(refused.status, 403, path)
        assert.include(pageText(refused.text), 'role: viewer', path)
      }
      assert.equal(await keysTable(), before)
      assert.equal(await countRows('audit_log'), auditRows)
      assert.lengthOf(merchant.requests, 0)
    } finally {
      await merchant.stop()
    }
  })

  test('a form without its CSRF token is refused and writes nothing', async ({ assert }) => {
    const agent = await asAdmin()
    await agent.get('/api-keys/new')
    const refused = await agent.post(
      '/api-keys',
      { pid: 'shop-9', note: '', ips: '' },
      { csrf: null }
    )
    assert.equal(refused.status, 403)
    assert.include(pageText(refused.text), 'This form has expired')
    assert.isNull(await ApiKey.findBy('pid', 'shop-9'))
  })
})

test.group('Console API keys: one key', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    admin = await createAdminUser({ role: 'admin' })
  })

  test('the key page: status, counts, allowed IPs, the secret hint only; an unknown pid is 404', async ({
    assert,
  }) => {
    const agent = await asAdmin()
    const page = await agent.get('/api-keys/1000')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.include(text, 'API key 1000')
    assert.include(text, 'Status Enabled')
    assert.include(text, 'Orders created 0')
    assert.include(text, 'Allowed IPs any address')
    assert.include(text, '…cdef')
    assert.notInclude(page.text, TEST_SECRET)

    const missing = await agent.get('/api-keys/4242')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), 'No API key has the pid 4242')
  })

  test('note and allowed IPs: saved, audited, applied to merchant requests', async ({ assert }) => {
    const agent = await asAdmin()
    const saved = await agent.submit('/api-keys/1000', {
      note: '  Main shop ',
      ips: '10.0.0.0/8\n192.0.2.1',
    })
    assert.equal(saved.location, '/admin/api-keys/1000')
    const page = await agent.get(saved.location!)
    assert.include(pageText(page.text), 'Saved the note and allowed IPs of pid 1000.')
    assert.include(page.text, '10.0.0.0/8\n192.0.2.1</textarea>')
    const key = await ApiKey.findByOrFail('pid', '1000')
    assert.deepEqual([key.note, key.ipAllowlist], ['Main shop', '10.0.0.0/8,192.0.2.1'])
    const [row] = await db.from('audit_log').where('action', 'api_key.update')
    assert.equal(row.actor, admin.email)
    assert.deepEqual(JSON.parse(row.after).ipAllowlist, '10.0.0.0/8,192.0.2.1')

    // The test client is 127.0.0.1: refused now, accepted once it is allowed.
    assert.equal(await apiStatus('1000', TEST_SECRET), 401)
    await agent.submit('/api-keys/1000', { note: 'Main shop', ips: '127.0.0.1, ::1' })
    assert.equal(await apiStatus('1000', TEST_SECRET), 200)
  })

  test('a bad allow-list is shown at its field and changes nothing', async ({ assert }) => {
    const agent = await asAdmin()
    const before = await keysTable()
    const refused = await agent.submit('/api-keys/1000', {
      note: 'kept?',
      ips: '203.0.113.7, 300.1.1.1',
      _back: '/admin/api-keys/1000',
    })
    assert.equal(refused.location, '/admin/api-keys/1000')
    const page = await agent.get('/api-keys/1000')
    assert.include(pageText(page.text), '"300.1.1.1" is not an IP address or CIDR range')
    assert.include(page.text, 'id="f-ips-error"')
    assert.include(page.text, '203.0.113.7, 300.1.1.1</textarea>')
    assert.equal(await keysTable(), before)
    assert.equal(await countRows('audit_log', { action: 'api_key.update' }), 0)
  })

  test('disable refuses the pid at once, enable accepts it again', async ({ assert }) => {
    const agent = await asAdmin()
    const show = await agent.get('/api-keys/1000')
    assert.include(pageText(show.text), 'Disable pid 1000? Its order requests are refused (401)')
    const disabled = await agent.post('/api-keys/1000/disable')
    assert.equal(disabled.location, '/admin/api-keys/1000')
    assert.include(pageText((await agent.get('/api-keys/1000')).text), 'pid 1000 is disabled')
    assert.equal((await ApiKey.findByOrFail('pid', '1000')).status, 'disabled')
    assert.equal(await apiStatus('1000', TEST_SECRET), 401)
    assert.include(
      pageText((await agent.get('/api-keys/1000/integration')).text),
      'This key is disabled'
    )

    await agent.post('/api-keys/1000/enable')
    assert.equal((await ApiKey.findByOrFail('pid', '1000')).status, 'active')
    assert.equal(await apiStatus('1000', TEST_SECRET), 200)
    const actions = (
      await db.from('audit_log').where('action', 'api_key.update').orderBy('id')
    ).map((row) => JSON.parse(row.after).status)
    assert.deepEqual(actions, ['disabled', 'active'])
  })

  test('rotate: the new secret once, the old one refused at once, never shown again', async ({
    assert,
  }) => {
    const agent = await asAdmin()
    await agent.get('/api-keys/1000')
    const rotated = await agent.post('/api-keys/1000/rotate')
    assert.equal(rotated.status, 200)
    assert.equal(rotated.headers.get('cache-control'), 'no-store')
    const secret = (await ApiKey.findByOrFail('pid', '1000')).signingSecret()
    assert.notEqual(secret, TEST_SECRET)
    assert.equal(elementText(rotated.text, 'key-secret'), secret)
    assert.include(pageText(rotated.text), 'The previous secret no longer signs')

    assert.equal(await apiStatus('1000', TEST_SECRET), 401)
    assert.equal(await apiStatus('1000', secret), 200)
    for (const path of ['/api-keys', '/api-keys/1000', '/api-keys/1000/integration', '/audit']) {
      assert.notInclude((await agent.get(path)).text, secret, path)
    }
    assert.notInclude(await auditText(), secret)
    assert.equal(await countRows('audit_log', { action: 'api_key.rotate' }), 1)
  })

  test('posting to an unknown pid is refused with a message, nothing written', async ({
    assert,
  }) => {
    const agent = await asAdmin()
    await agent.get('/api-keys')
    const refused = await agent.post('/api-keys/4242/rotate', { _back: '/admin/api-keys' })
    assert.equal(refused.location, '/admin/api-keys')
    assert.include(pageText((await agent.get('/api-keys')).text), 'No API key with pid 4242')
    assert.equal(await countRows('audit_log', { subject_type: 'api_key' }), 0)
  })
})

test.group('Console API keys: the integration page', (group) => {
  const merchant = merchantForGroup(group, { lifecycle: false })
  group.each.setup(async () => {
    admin = await createAdminUser({ role: 'admin' })
  })

  test('endpoints, the pid, the examples and the compat submit URL; the secret nowhere', async ({
    assert,
  }) => {
    const agent = await asAdmin()
    const page = await agent.get('/api-keys/1000/integration')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.include(text, `${process.env.APP_URL}/payments/native/v1/order/create-transaction`)
    assert.include(text, `${process.env.APP_URL}/payments/native/v1/config`)
    assert.include(
      text,
      `${process.env.APP_URL}/payments/compat/v1/order/create-transaction/submit.php`
    )
    // the EPay base URL to copy, as an SDK wants it, and the endpoints under it with their answers
    assert.equal(
      elementText(page.text, 'compat-url'),
      `${process.env.APP_URL}/payments/compat/v1/order/create-transaction/`
    )
    for (const call of [
      'submit.php',
      'mapi.php',
      'api.php?act=order',
      'api.php?act=orders',
      'api.php?act=refund',
    ]) {
      assert.include(text, call)
    }
    assert.include(text, 'refunds are not supported')
    // the order query, the OpenAPI document, and what an epusdt plugin changes, with this installation's URLs
    assert.include(text, `${process.env.APP_URL}/payments/native/v1/order/query`)
    assert.include(text, `${process.env.APP_URL}/payments/native/v1/openapi.json`)
    assert.include(text, 'Moving a shop from epusdt or BEpusdt')
    assert.include(
      text,
      `epusdt / BEpusdt: {epusdt}/api/v1/order/create-transaction Here: ${process.env.APP_URL}/payments/native/v1/order/create-transaction`
    )
    assert.include(text, 'pid=1000 in every request, signed')
    // The migration card is the core's (it names no flavour's URL); the EPay card is compat's own.
    assert.include(text, 'A shop with an EPay plugin needs no change once the compat plugin is on')
    assert.include(
      text,
      'The compat plugin is on: a shop with an EPay plugin or the EPay SDK works unmodified.'
    )
    for (const id of [
      'create-shell',
      'create-php',
      'create-node',
      'callback-php',
      'callback-node',
    ]) {
      assert.include(page.text, `<pre class="copy-value" id="${id}"`, id)
      assert.include(page.text, `data-copy="${id}"`, id)
    }
    assert.include(elementText(page.text, 'create-shell'), 'openssl dgst -sha256 -hmac "$SECRET"')
    assert.include(
      elementText(page.text, 'create-shell-run'),
      `${SECRET_VARIABLE}='<secret of pid 1000>' bash create_order.sh`
    )
    assert.notInclude(page.text, TEST_SECRET)
  })

  test('the shell example as the page shows it (copied text) creates an order', async ({
    assert,
  }) => {
    await makeTronPayable()
    await settings.set('rate_limit.create_per_minute', '0')
    const agent = await asAdmin()
    const page = await agent.get('/api-keys/1000/integration')
    const code = elementText(page.text, 'create-shell')
    const scratch = await scratchDirectory()
    try {
      const file = await scratch.write('create_order.sh', code)
      const run = await runProgram(
        'bash',
        [file],
        { [SECRET_VARIABLE]: TEST_SECRET },
        { cwd: scratch.path }
      )
      assert.equal(run.code, 0, run.stdout + run.stderr)
      const tradeId = JSON.parse(run.stdout.trim().split('\n').at(-1)!).data.trade_id
      const order = await Order.findByOrFail('trade_id', tradeId)
      assert.deepEqual([order.pid, order.token, order.network], ['1000', 'USDT', 'tron'])
    } finally {
      await scratch.cleanup()
    }
  })

  test('send test callback: the shop answer is shown on the page', async ({ assert }) => {
    await settings.set('callbacks.allow_private_targets', 'true')
    const agent = await asAdmin()
    const sent = await agent.submit(
      '/api-keys/1000/test-callback',
      { url: merchant.notifyUrl, format: 'native' },
      '/api-keys/1000/integration'
    )
    assert.equal(sent.location, '/admin/api-keys/1000/integration#test-callback')
    const page = await agent.get('/api-keys/1000/integration')
    const text = pageText(page.text)
    assert.include(text, "The shop's answer Acknowledged The shop accepted the callback.")
    assert.include(text, 'HTTP status 200')
    assert.match(text, /Duration \d+ ms/)
    assert.include(text, 'Response success')
    assert.include(text, `POST ${merchant.notifyUrl}`)
    assert.include(page.text, `value="${merchant.notifyUrl}"`)
    assert.lengthOf(merchant.requests, 1)
    assert.match(JSON.parse(merchant.requests[0].body).trade_id, /^TEST-/)
    // Shown once: a reload no longer has it.
    assert.notInclude(
      pageText((await agent.get('/api-keys/1000/integration')).text),
      "The shop's answer"
    )
  })

  test('send test callback: an error answer, a refused address and a bad URL are shown', async ({
    assert,
  }) => {
    const agent = await asAdmin()
    await settings.set('callbacks.allow_private_targets', 'true')
    merchant.reset([{ status: 503, body: 'maintenance' }])
    await agent.submit(
      '/api-keys/1000/test-callback',
      { url: merchant.notifyUrl, format: 'native' },
      '/api-keys/1000/integration'
    )
    let text = pageText((await agent.get('/api-keys/1000/integration')).text)
    assert.include(text, 'Not acknowledged A real callback would be retried.')
    assert.include(text, 'HTTP status 503')
    assert.include(text, 'Response maintenance')

    await settings.set('callbacks.allow_private_targets', 'false')
    await agent.submit(
      '/api-keys/1000/test-callback',
      { url: merchant.notifyUrl, format: 'native' },
      '/api-keys/1000/integration'
    )
    text = pageText((await agent.get('/api-keys/1000/integration')).text)
    assert.include(text, 'Not sent The address is not allowed.')
    assert.include(text, '127.0.0.1 is a private or loopback address')
    assert.lengthOf(merchant.requests, 1)

    const bad = await agent.submit(
      '/api-keys/1000/test-callback',
      { url: 'shop.example/notify', format: 'native', _back: '/admin/api-keys/1000/integration' },
      '/api-keys/1000/integration'
    )
    assert.equal(bad.location, '/admin/api-keys/1000/integration')
    const page = await agent.get('/api-keys/1000/integration')
    assert.include(page.text, 'id="f-url-error"')
    assert.include(pageText(page.text), '"shop.example/notify" is not a URL')
    assert.lengthOf(merchant.requests, 1)
  })

  test('a pid that is not numeric: no compat format to pick, and a warning on the compat card', async ({
    assert,
  }) => {
    const agent = await asAdmin()
    await agent.submit('/api-keys', { pid: 'shop-7', note: '', ips: '' }, '/api-keys/new')
    const page = await agent.get('/api-keys/shop-7/integration')
    assert.include(pageText(page.text), 'Compat shops need a numeric pid')
    assert.notInclude(page.text, 'name="format" class')
    assert.include(page.text, '<input type="hidden" name="format" value="native">')
    const numeric = await agent.get('/api-keys/1000/integration')
    assert.include(numeric.text, '<option value="compat"')
  })
})
