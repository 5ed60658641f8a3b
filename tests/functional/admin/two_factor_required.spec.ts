import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import {
  ADMIN_PASSWORD,
  AdminAgent,
  createAdminUser,
  currentTotp,
  pageText,
} from '#tests/helpers/admin'

/** Sets the requirement as an operator would (settings:set), after the helper's default. */
async function requireTwoFactor(on: boolean) {
  await settings.set('console.require_2fa_admins', on ? 'true' : 'false')
}

test.group('Console: two-factor required for admins', (group) => {
  group.each.setup(() => resetDatabase())

  test('the setting is on by default', async ({ assert }) => {
    assert.isTrue(await settings.get('console.require_2fa_admins'))
  })

  test('an admin without 2FA reaches only the set-up and sign-out until enrolled; then everything', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    await requireTwoFactor(true)
    const agent = await AdminAgent.signIn(admin)

    // Every other page sends them to the account page, which says why.
    for (const path of ['/', '/orders', '/settings', '/users']) {
      const page = await agent.get(path)
      assert.equal(page.status, 302, path)
      assert.equal(page.location, '/admin/account', path)
    }
    const account = await agent.get('/account')
    assert.equal(account.status, 200)
    assert.include(pageText(account.text), 'Set up two-factor sign-in to use the console')
    assert.notInclude(account.text, 'name="new_password"')

    // A write elsewhere is refused, and writes nothing.
    const refused = await agent.post('/users', { email: 'someone@example.com', role: 'viewer' })
    assert.equal(refused.status, 403)
    assert.include(
      pageText(refused.text),
      'Administrators must use two-factor sign-in: set it up on your account page'
    )
    assert.isNull(await db.from('users').where('email', 'someone@example.com').first())
    const password = await agent.post('/account/password', {
      current_password: ADMIN_PASSWORD,
      new_password: 'another long passphrase',
      new_password_confirmation: 'another long passphrase',
    })
    assert.equal(password.status, 403)

    // The enrolment itself works.
    await agent.get('/account')
    assert.equal(
      (await agent.post('/account/2fa/start', { password: ADMIN_PASSWORD })).location,
      '/admin/account/2fa'
    )
    const enrol = await agent.get('/account/2fa')
    assert.equal(enrol.status, 200)
    const key = /id="totp-secret">([A-Z2-7 ]+)</.exec(enrol.text)![1].replace(/ /g, '')
    const confirmed = await agent.post('/account/2fa/confirm', { code: currentTotp(key) })
    assert.equal(confirmed.status, 200)
    assert.equal((await agent.get('/orders')).status, 200)
    assert.equal((await agent.get('/')).status, 200)
  })

  test('sign-out stays open to an admin who owes the set-up', async ({ assert }) => {
    const admin = await createAdminUser()
    await requireTwoFactor(true)
    const agent = await AdminAgent.signIn(admin)
    const out = await agent.submit('/logout', {}, '/account')
    assert.equal(out.location, '/admin/login')
    assert.equal((await agent.get('/account')).location, '/admin/login')
  })

  test('viewers are not held back, nor admins once the setting is off', async ({ assert }) => {
    const viewer = await createAdminUser({ role: 'viewer' })
    const admin = await createAdminUser()
    await requireTwoFactor(true)
    assert.equal((await (await AdminAgent.signIn(viewer)).get('/orders')).status, 200)
    const agent = await AdminAgent.signIn(admin)
    assert.equal((await agent.get('/orders')).location, '/admin/account')
    await requireTwoFactor(false)
    assert.equal((await agent.get('/orders')).status, 200)
  })

  test('an enrolled admin whose 2FA is reset is held at the set-up again', async ({ assert }) => {
    const admin = await createAdminUser({ totp: true })
    const other = await createAdminUser({ totp: true })
    await requireTwoFactor(true)
    const agent = await AdminAgent.signIn(other)
    assert.equal((await agent.get('/orders')).status, 200)
    const acting = await AdminAgent.signIn(admin)
    const reset = await acting.submit(
      `/users/${other.user.id}/2fa-reset`,
      { password: ADMIN_PASSWORD },
      '/users'
    )
    assert.equal(reset.location, '/admin/users')
    assert.equal((await agent.get('/orders')).location, '/admin/account')
  })
})

test.group('Console: re-authentication for two-factor changes', (group) => {
  group.each.setup(() => resetDatabase())

  test('starting the 2FA set-up asks the current password: a wrong or missing one starts nothing', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    const page = await agent.get('/account')
    assert.include(page.text, 'id="start-2fa-password"')

    const wrong = await agent.submit(
      '/account/2fa/start',
      { password: 'not my password at all' },
      '/account'
    )
    assert.equal(wrong.location, '/admin/account')
    assert.include(
      pageText((await agent.get('/account')).text),
      'Wrong password: two-factor set-up was not started'
    )
    const missing = await agent.submit('/account/2fa/start', {}, '/account')
    assert.equal(missing.location, '/admin/account')
    const user = await db.from('users').where('id', admin.user.id).first()
    assert.isNull(user.totp_secret)
    assert.lengthOf(await db.from('audit_log').where('action', 'user.2fa_start'), 0)

    const right = await agent.submit('/account/2fa/start', { password: ADMIN_PASSWORD }, '/account')
    assert.equal(right.location, '/admin/account/2fa')
  })

  test("resetting another admin's 2FA asks the acting admin's own password", async ({ assert }) => {
    const admin = await createAdminUser({ password: 'the acting admin passphrase' })
    const other = await createAdminUser({ totp: true })
    const agent = await AdminAgent.signIn(admin)
    const list = await agent.get('/users')
    assert.include(list.text, `id="reset-2fa-password-${other.user.id}"`)

    // The other admin's password is not the one asked.
    const wrong = await agent.submit(
      `/users/${other.user.id}/2fa-reset`,
      { password: ADMIN_PASSWORD },
      '/users'
    )
    assert.equal(wrong.location, '/admin/users')
    assert.include(
      pageText((await agent.get('/users')).text),
      `Wrong password: enter your own password to reset the two-factor sign-in of ${other.email}`
    )
    const missing = await agent.submit(`/users/${other.user.id}/2fa-reset`, {}, '/users')
    assert.equal(missing.location, '/admin/users')
    assert.isNotNull((await db.from('users').where('id', other.user.id).first()).totp_enabled_at)
    assert.lengthOf(await db.from('audit_log').where('action', 'user.2fa_reset'), 0)

    const reset = await agent.submit(
      `/users/${other.user.id}/2fa-reset`,
      { password: 'the acting admin passphrase' },
      '/users'
    )
    assert.equal(reset.location, '/admin/users')
    assert.isNull((await db.from('users').where('id', other.user.id).first()).totp_enabled_at)
    assert.lengthOf(await db.from('audit_log').where('action', 'user.2fa_reset'), 1)
  })
})
