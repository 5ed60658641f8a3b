import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { allSettingsGroups } from '#services/admin/settings_groups'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'
import { countRows, emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { atServerProcess } from '#tests/helpers/processes'

async function storedValue(key: string): Promise<string | undefined> {
  const row = await db.from('settings').where('key', key).first()
  return row?.value
}

async function signedIn(role: 'admin' | 'viewer' = 'admin') {
  const user = await createAdminUser({ role })
  return { user, agent: await AdminAgent.signIn(user) }
}

/** The value attribute of the input named `name` on the page. */
function inputValue(html: string, name: string): string | null {
  const tag = new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(html)?.[0]
  if (!tag) return null
  return /value="([^"]*)"/.exec(tag)?.[1] ?? ''
}

test.group('Console settings pages', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await emptyAuditLog()
  })

  test('every group has a page with a sub-navigation; /settings opens the first; an unknown group is 404', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    const start = await agent.get('/settings')
    assert.equal(start.status, 302)
    assert.equal(start.location, '/admin/settings/site')
    for (const entry of allSettingsGroups().filter((item) => item.id !== 'plugins')) {
      const page = await agent.get(`/settings/${entry.id}`)
      assert.equal(page.status, 200, entry.id)
      assert.include(pageText(page.text), entry.title)
      assert.match(page.text, new RegExp(`href="/admin/settings/${entry.id}" aria-current="page"`))
      for (const key of Object.keys(entry.labels))
        assert.include(page.text, `data-setting="${key}"`, key)
    }
    const missing = await agent.get('/settings/nope')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), 'There is no settings page of that name.')
  })

  test('saving a page stores the values, audits them, says so; values are shown back', async ({
    assert,
  }) => {
    const { agent, user } = await signedIn()
    const saved = await agent.submit(
      '/settings/orders',
      {
        order__expiration_minutes: '30',
        order__late_payment_margin_seconds: '900',
        order__amount_max_steps: '100',
      },
      '/settings/orders'
    )
    assert.equal(saved.status, 302)
    assert.equal(saved.location, '/admin/settings/orders')
    assert.strictEqual(await settings.get('order.expiration_minutes'), 30)
    const page = await agent.get('/settings/orders')
    assert.include(pageText(page.text), 'Saved Order lifetime: 1 setting changed.')
    assert.equal(inputValue(page.text, 'order__expiration_minutes'), '30')
    const [row] = await db.from('audit_log').where('action', 'setting.set')
    assert.include(row, {
      subject_id: 'order.expiration_minutes',
      actor: user.email,
      ip: '127.0.0.1',
    })
  })

  test('an invalid value: a message at the field, the typed values kept, nothing stored', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    const refused = await agent.submit('/settings/orders', {
      order__expiration_minutes: '45',
      order__late_payment_margin_seconds: 'soon',
      order__amount_max_steps: '0',
    })
    assert.equal(refused.location, '/admin/settings/orders')
    const page = await agent.get('/settings/orders')
    const text = pageText(page.text)
    assert.include(text, 'Nothing was saved: some values need your attention')
    assert.include(text, 'Late payment margin (seconds) must be a whole number.')
    assert.include(text, 'Amount steps tried must be between 1 and 10000.')
    assert.equal(inputValue(page.text, 'order__late_payment_margin_seconds'), 'soon')
    assert.equal(inputValue(page.text, 'order__expiration_minutes'), '45')
    assert.isUndefined(await storedValue('order.expiration_minutes'))
    assert.equal(await countRows('audit_log', { action: 'setting.set' }), 0)
  })

  test('an emptied text is stored as "" and shown as ""', async ({ assert }) => {
    const { agent } = await signedIn()
    await agent.submit('/settings/site', { site__cashier_name: '', site__website_title: 'My shop' })
    assert.strictEqual(await storedValue('site.cashier_name'), '')
    const page = await agent.get('/settings/site')
    assert.equal(inputValue(page.text, 'site__cashier_name'), '')
    assert.equal(inputValue(page.text, 'site__website_title'), 'My shop')
  })

  test("branding: the preview is rendered from the saved values, its colours in a nonce'd block; no inline script", async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    await agent.submit('/settings/site', {
      site__cashier_name: 'Acme Pay',
      site__logo_url: 'https://cdn.example/logo.png',
      site__background_color: '#0a7',
      site__background_image_url: 'https://cdn.example/bg.jpg',
      site__support_link: 'mailto:help@example.com',
    })
    const page = await agent.get('/settings/site')
    const nonce = /'nonce-([^']+)'/.exec(page.headers.get('content-security-policy')!)![1]
    assert.include(
      page.text,
      `<style nonce="${nonce}">.brand-preview{ --page-bg:#0a7;--page-bg-image:url("https://cdn.example/bg.jpg") }</style>`
    )
    assert.match(page.text, /<span class="bp-name" data-preview="name">Acme Pay<\/span>/)
    assert.match(
      page.text,
      /<img class="bp-logo" data-preview="logo" src="https:\/\/cdn.example\/logo.png"/
    )
    assert.match(page.text, /<span data-preview="support"\s*>Support<\/span>/)
    assert.match(
      page.text,
      /<script src="\/assets\/admin_branding.js\?v=[0-9a-f]+" defer><\/script>/
    )
    assert.notMatch(page.text, /<script(?![^>]*\bsrc=)[^>]*>/)
    assert.notMatch(page.text, /\sstyle="/)
    const script = await fetch(`${process.env.APP_URL}/assets/admin_branding.js`)
    assert.equal(script.status, 200)

    // A value the cashier refuses is not in the preview either.
    await settings.set('site.logo_url', 'javascript:alert(1)')
    const refused = await agent.get('/settings/site')
    assert.match(
      refused.text,
      /data-preview="logo" src="data:," alt="" width="28" height="28"\s+hidden/
    )
    assert.notMatch(refused.text, /src="javascript:/)
  })

  test('the provider token: masked, never in the page; blank keeps it; clear empties it', async ({
    assert,
  }) => {
    const token = 'shop-token-0123456789-wxyz'
    const { agent } = await signedIn()
    await agent.submit('/settings/provider', {
      provider__shop_token: token,
      provider__shop_id: 'shop-9',
    })
    const stored = (await storedValue('provider.shop_token'))!
    assert.equal(revealSecret(stored, SecretPurpose.setting('provider.shop_token')), token)
    const page = await agent.get('/settings/provider')
    assert.notInclude(page.text, token)
    assert.notInclude(page.text, stored)
    assert.include(pageText(page.text), 'Stored: …wxyz. Leave blank to keep it.')
    assert.equal(inputValue(page.text, 'provider__shop_token'), '')

    await agent.submit('/settings/provider', {
      provider__shop_token: '',
      provider__shop_id: 'shop-10',
    })
    assert.equal(await storedValue('provider.shop_token'), stored)
    assert.equal(await storedValue('provider.shop_id'), 'shop-10')

    // A refusal on the page never sends the typed token back.
    const refused = await agent.submit('/settings/provider', {
      provider__shop_token: 'typed-secret-value-123',
      provider__timeout_seconds: 'x',
    })
    assert.equal(refused.status, 302)
    const again = await agent.get('/settings/provider')
    assert.notInclude(again.text, 'typed-secret-value-123')
    assert.equal(await storedValue('provider.shop_token'), stored)

    await agent.submit('/settings/provider', {
      provider__shop_token: '',
      clear: 'provider__shop_token',
    })
    assert.strictEqual(await storedValue('provider.shop_token'), '')
    assert.include(pageText((await agent.get('/settings/provider')).text), 'None is stored.')
  })

  test('booleans and enums are selects; a value outside them is refused with a message', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    const page = await agent.get('/settings/callbacks')
    assert.match(
      page.text,
      /<select id="f-callbacks__allow_private_targets" name="callbacks__allow_private_targets"/
    )
    await agent.submit('/settings/callbacks', { callbacks__allow_private_targets: 'true' })
    assert.isTrue(await settings.get('callbacks.allow_private_targets'))
    await agent.submit('/settings/rate_limits', { rate_limit__store: 'disk' })
    assert.include(
      pageText((await agent.get('/settings/rate_limits')).text),
      'Counter store must be one of memory, database, redis.'
    )
    assert.equal(await settings.get('rate_limit.store'), 'memory')
  })

  test('fixed rates: listed, added and changed through RateAdmin; a bad rate is refused with its message', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    const empty = await agent.get('/settings/rates')
    assert.include(pageText(empty.text), 'No fixed rate yet')
    const added = await agent.submit(
      '/settings/rates/fixed',
      { token: 'usdt', fiat: 'cny', rate: '7.25' },
      '/settings/rates'
    )
    assert.equal(added.location, '/admin/settings/rates')
    const page = await agent.get('/settings/rates')
    assert.include(pageText(page.text), 'Fixed rate set: 1 USDT = 7.25 CNY.')
    assert.include(page.text, 'value="7.25"')
    await agent.submit(
      '/settings/rates/fixed',
      { token: 'USDT', fiat: 'CNY', rate: '7.3' },
      '/settings/rates'
    )
    assert.equal(
      (await db.from('rates').where('token', 'USDT').first()).rate.toString().replace(/0+$/, ''),
      '7.3'
    )
    assert.equal(await countRows('audit_log', { action: 'rate.set' }), 2)

    const refused = await agent.submit(
      '/settings/rates/fixed',
      { token: 'USDT', fiat: 'CNY', rate: '-1' },
      '/settings/rates'
    )
    assert.equal(refused.location, '/admin/settings/rates')
    assert.include(
      pageText((await agent.get('/settings/rates')).text),
      'The rate must be a positive decimal number'
    )
    assert.equal(await countRows('audit_log', { action: 'rate.set' }), 2)
  })

  test('a viewer sees the pages but every POST is 403 and writes nothing', async ({ assert }) => {
    const { agent } = await signedIn('viewer')
    assert.equal((await agent.get('/settings/site')).status, 200)
    const save = await agent.post('/settings/site', { site__cashier_name: 'Hijacked' })
    assert.equal(save.status, 403)
    const rate = await agent.post('/settings/rates/fixed', {
      token: 'USDT',
      fiat: 'CNY',
      rate: '1',
    })
    assert.equal(rate.status, 403)
    assert.equal(await settings.get('site.cashier_name'), 'Crypto Cashier')
    assert.equal(await countRows('rates'), 0)
    assert.equal(await countRows('audit_log', { action: 'setting.set' }), 0)
  })

  test('without the CSRF token a save is refused and nothing is written', async ({ assert }) => {
    const { agent } = await signedIn()
    await agent.get('/settings/site')
    const forged = await agent.post(
      '/settings/site',
      { site__cashier_name: 'Forged' },
      { csrf: null }
    )
    assert.equal(forged.status, 403)
    assert.equal(await settings.get('site.cashier_name'), 'Crypto Cashier')
  })

  test('with its plugin turned off, a group says so, shows no field and refuses a save; stored values stay', async ({
    assert,
  }) => {
    await settings.set('provider.shop_id', 'kept-shop')
    const admin = await createAdminUser()
    // The agent talks to the server at APP_URL: this one, for this test.
    await atServerProcess({ PLUGINS: '-provider' }, async () => {
      const agent = await AdminAgent.signIn(admin)
      const page = await agent.get('/settings/provider')
      assert.equal(page.status, 200)
      const text = pageText(page.text)
      assert.include(text, 'The provider plugin is turned off (PLUGINS)')
      assert.notInclude(page.text, 'name="provider__shop_id"')
      assert.match(
        page.text,
        /Provider account\s*<\/span>\s*<span class="badge badge-neutral">off<\/span>/
      )
      const refused = await agent.post('/settings/provider', { provider__shop_id: 'changed' })
      assert.equal(refused.status, 302)
      assert.include(
        pageText((await agent.get('/settings/provider')).text),
        'its settings cannot be changed until it is back'
      )
    })
    assert.equal(await storedValue('provider.shop_id'), 'kept-shop')
  }).timeout(60_000)
})
