import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { resetDatabase } from '#tests/helpers/database'
import {
  ADMIN_PASSWORD,
  AdminAgent,
  createAdminUser,
  currentTotp,
  pageText,
} from '#tests/helpers/admin'
import { startServerProcess } from '#tests/helpers/processes'
import { LOGIN_LIMITS } from '#admin/login_throttle'
import { SESSION_KEYS } from '#admin/admin_session'

function sessionCookie(agent: AdminAgent) {
  return agent.cookies.get('gateway_console') ?? null
}

async function auditActions() {
  const rows = await db
    .from('audit_log')
    .where((query) =>
      query.where('action', 'like', 'auth.%').orWhere('action', 'like', 'user.2fa%')
    )
    .orderBy('id')
    .select('action', 'actor', 'ip', 'request_id', 'after')
  return rows
}

test.group('Console sign-in', (group) => {
  group.each.setup(() => resetDatabase())

  test('the sign-in page carries the security headers and a HttpOnly SameSite=Lax session cookie on ADMIN_PATH', async ({
    assert,
  }) => {
    const agent = new AdminAgent()
    const page = await agent.get('/login')
    assert.equal(page.status, 200)
    const csp = page.headers.get('content-security-policy')!
    assert.include(csp, "script-src 'self'")
    assert.notInclude(csp, 'unsafe-inline')
    assert.include(csp, "frame-ancestors 'none'")
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer')
    assert.equal(page.headers.get('x-frame-options'), 'DENY')
    assert.equal(page.headers.get('cache-control'), 'no-store')
    assert.notMatch(page.text, /<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/)
    const cookie = page.headers.getSetCookie().find((line) => line.startsWith('gateway_console='))!
    assert.match(cookie, /HttpOnly/)
    assert.match(cookie, /SameSite=Lax/)
    assert.match(cookie, /Path=\/admin/)
    assert.notMatch(cookie, /Secure/)
    // The merchant API stays free of console cookies.
    const api = await fetch(`${process.env.APP_URL}/payments/native/v1/config`)
    assert.lengthOf(api.headers.getSetCookie(), 0)
  })

  test('signs in with the e-mail in any case, renews the session id and audits the sign-in', async ({
    assert,
  }) => {
    const admin = await createAdminUser({ email: 'Owner@Example.com' })
    const agent = new AdminAgent()
    await agent.get('/login')
    const before = sessionCookie(agent)
    const response = await agent.post('/login', {
      email: 'OWNER@example.COM',
      password: ADMIN_PASSWORD,
    })
    assert.equal(response.status, 302)
    assert.equal(response.location, '/admin')
    assert.notEqual(sessionCookie(agent), before)
    const home = await agent.get('/')
    assert.equal(home.status, 200)
    assert.include(pageText(home.text), 'owner@example.com')
    const [row] = await auditActions()
    assert.equal(row.action, 'auth.login')
    assert.equal(row.actor, admin.email.toLowerCase())
    assert.equal(row.ip, '127.0.0.1')
    assert.isString(row.request_id)
    const user = await db.from('users').where('id', admin.user.id).first()
    assert.isNotNull(user.last_login_at)
  })

  test('a wrong password is refused with a message and audited as a failure', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = new AdminAgent()
    const response = await agent.submit('/login', {
      email: admin.email,
      password: 'not the password at all',
    })
    assert.equal(response.location, '/admin/login')
    const page = await agent.get('/login')
    assert.include(pageText(page.text), 'That e-mail and password do not match an administrator.')
    // The e-mail is kept, the password never.
    assert.include(page.text, `value="${admin.email}"`)
    assert.notInclude(page.text, 'not the password at all')
    assert.equal((await agent.get('/')).location, '/admin/login')
    const rows = await auditActions()
    assert.deepEqual(
      rows.map((row) => row.action),
      ['auth.login_failed']
    )
    assert.equal(rows[0].actor, 'anonymous')
    assert.include(rows[0].after, admin.email)
  })

  test('a form without or with a forged CSRF token is refused with 403 and changes nothing', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = new AdminAgent()
    await agent.get('/login')
    const missing = await agent.post(
      '/login',
      { email: admin.email, password: ADMIN_PASSWORD },
      { csrf: null }
    )
    assert.equal(missing.status, 403)
    assert.include(pageText(missing.text), 'This form has expired')
    const forged = await agent.post(
      '/login',
      { email: admin.email, password: ADMIN_PASSWORD },
      { csrf: 'forged-token' }
    )
    assert.equal(forged.status, 403)
    // A token of another session is no better.
    const other = new AdminAgent()
    await other.get('/login')
    const stolen = await agent.post(
      '/login',
      { email: admin.email, password: ADMIN_PASSWORD },
      { csrf: other.csrf }
    )
    assert.equal(stolen.status, 403)
    assert.equal((await agent.get('/')).location, '/admin/login')
    assert.lengthOf(await auditActions(), 0)

    // Signed in, a change without the token is refused too.
    const signedIn = await AdminAgent.signIn(admin)
    const refused = await signedIn.post('/account/2fa/start', {}, { csrf: null })
    assert.equal(refused.status, 403)
    const user = await db.from('users').where('id', admin.user.id).first()
    assert.isNull(user.totp_secret)
  })

  test('after too many failures an account must wait, told how long, even with the right password', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = new AdminAgent()
    for (let attempt = 0; attempt < LOGIN_LIMITS.accountIp.requests; attempt++) {
      const response = await agent.submit('/login', {
        email: admin.email,
        password: `wrong-${attempt}-password`,
      })
      assert.equal(response.status, 302)
    }
    const blocked = await agent.submit('/login', {
      email: admin.email.toUpperCase(),
      password: ADMIN_PASSWORD,
    })
    assert.equal(blocked.status, 429)
    const seconds = Number(blocked.headers.get('retry-after'))
    assert.isAbove(seconds, 60)
    assert.include(pageText(blocked.text), `Too many failed attempts. Try again in ${seconds} s.`)
    assert.equal((await agent.get('/')).location, '/admin/login')
    // Another account from another client is not held back.
    const other = await createAdminUser()
    await AdminAgent.signIn(other)
  })

  test('after too many failures from one IP, every account waits', async ({ assert }) => {
    const admin = await createAdminUser()
    const agent = new AdminAgent()
    for (let attempt = 0; attempt < LOGIN_LIMITS.ip.requests; attempt++) {
      await agent.submit('/login', {
        email: `nobody${attempt}@example.com`,
        password: 'wrong password here',
      })
    }
    const blocked = await agent.submit('/login', { email: admin.email, password: ADMIN_PASSWORD })
    assert.equal(blocked.status, 429)
    assert.match(pageText(blocked.text), /Try again in \d+ s\./)
  })

  test('two-factor: the password alone is not enough; a wrong code is refused; a recovery code works once', async ({
    assert,
  }) => {
    const admin = await createAdminUser({ totp: true })
    const agent = new AdminAgent()
    const first = await agent.submit('/login', { email: admin.email, password: ADMIN_PASSWORD })
    assert.equal(first.location, '/admin/login/2fa')
    assert.equal((await agent.get('/')).location, '/admin/login')

    const wrong = await agent.submit('/login/2fa', {
      code: '000000' === currentTotp(admin.totpSecret!) ? '111111' : '000000',
    })
    assert.equal(wrong.location, '/admin/login/2fa')
    assert.include(pageText((await agent.get('/login/2fa')).text), 'That code is not valid')
    const actions = (await auditActions()).map((row) => row.action)
    assert.deepEqual(actions.slice(-1), ['auth.login_failed'])

    const right = await agent.submit('/login/2fa', { code: currentTotp(admin.totpSecret!) })
    assert.equal(right.location, '/admin')
    assert.equal((await agent.get('/')).status, 200)
    const login = (await auditActions()).at(-1)!
    assert.equal(login.action, 'auth.login')
    assert.include(login.after, 'totp')
  })

  test('two-factor enrolment from the account page: QR and key, wrong code refused, ten recovery codes once, then disable with the password', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    const start = await agent.submit('/account/2fa/start', { password: ADMIN_PASSWORD }, '/account')
    assert.equal(start.location, '/admin/account/2fa')
    const enrol = await agent.get('/account/2fa')
    assert.include(
      enrol.text,
      '<svg role="img" aria-label="QR code to scan with an authenticator app"'
    )
    const key = /id="totp-secret">([A-Z2-7 ]+)</.exec(enrol.text)![1].replace(/ /g, '')
    assert.lengthOf(key, 32)

    const wrong = await agent.post('/account/2fa/confirm', {
      code: currentTotp(key, Date.now() - 5 * 60_000),
    })
    assert.equal(wrong.location, '/admin/account/2fa')
    assert.include(pageText((await agent.get('/account/2fa')).text), 'That code is not valid')
    const notDigits = await agent.post('/account/2fa/confirm', { code: 'abc' })
    assert.equal(notDigits.location, '/admin/account/2fa')

    const codes = await agent.post('/account/2fa/confirm', { code: currentTotp(key) })
    assert.equal(codes.status, 200)
    const block = /<pre[^>]*id="recovery-codes"[^>]*>([\s\S]*?)<\/pre>/.exec(codes.text)![1]
    const recovery = block.match(/\b[a-z2-7]{5}-[a-z2-7]{5}\b/g)!
    assert.lengthOf(new Set(recovery), 10)
    // Never shown again.
    const account = await agent.get('/account')
    for (const code of recovery) assert.notInclude(account.text, code)
    assert.include(pageText(account.text), '10 recovery codes left')

    // Signing in now needs a second factor; a recovery code works, once.
    const other = new AdminAgent()
    await other.submit('/login', { email: admin.email, password: ADMIN_PASSWORD })
    assert.equal((await other.submit('/login/2fa', { code: recovery[0] })).location, '/admin')
    const again = new AdminAgent()
    await again.submit('/login', { email: admin.email, password: ADMIN_PASSWORD })
    assert.equal(
      (await again.submit('/login/2fa', { code: recovery[0] })).location,
      '/admin/login/2fa'
    )

    const badPassword = await agent.submit(
      '/account/2fa/disable',
      { password: 'not my password!!' },
      '/account'
    )
    assert.equal(badPassword.location, '/admin/account')
    assert.include(
      pageText((await agent.get('/account')).text),
      'Wrong password: two-factor sign-in stays on'
    )
    const disabled = await agent.submit(
      '/account/2fa/disable',
      { password: ADMIN_PASSWORD },
      '/account'
    )
    assert.equal(disabled.location, '/admin/account')
    const user = await db.from('users').where('id', admin.user.id).first()
    assert.isNull(user.totp_enabled_at)
    const actions = (await auditActions()).map((row) => row.action)
    assert.includeMembers(actions, ['user.2fa_enable', 'user.2fa_disable'])
  })

  test('changing the password keeps this session, ends the others, and needs the current password', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const mine = await AdminAgent.signIn(admin)
    const elsewhere = await AdminAgent.signIn(admin)

    const wrong = await mine.submit(
      '/account/password',
      {
        current_password: 'not the current one',
        new_password: 'a brand new passphrase',
        new_password_confirmation: 'a brand new passphrase',
      },
      '/account'
    )
    assert.equal(wrong.location, '/admin/account')
    assert.include(pageText((await mine.get('/account')).text), 'The current password is not right')
    const short = await mine.submit(
      '/account/password',
      {
        current_password: ADMIN_PASSWORD,
        new_password: 'short',
        new_password_confirmation: 'short',
      },
      '/account'
    )
    assert.equal(short.location, '/admin/account')
    assert.match(pageText((await mine.get('/account')).text), /at least 12/)

    const changed = await mine.submit(
      '/account/password',
      {
        current_password: ADMIN_PASSWORD,
        new_password: 'a brand new passphrase',
        new_password_confirmation: 'a brand new passphrase',
      },
      '/account'
    )
    assert.equal(changed.location, '/admin/account')
    assert.equal((await mine.get('/')).status, 200)
    const ended = await elsewhere.get('/')
    assert.equal(ended.location, '/admin/login')
    assert.include(pageText((await elsewhere.get('/login')).text), 'Your password was changed')
    await AdminAgent.signIn({ email: admin.email, password: 'a brand new passphrase' })
  })

  test('an idle session is signed out; signing out ends the session on the server', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    assert.equal((await agent.get('/')).status, 200)
    // Pretend the last request was 31 minutes ago (the default idle timeout is 30).
    for (const row of await db.from('sessions').select('id', 'data')) {
      const data = JSON.parse(row.data)
      if (data.message?.[SESSION_KEYS.seenAt]) {
        data.message[SESSION_KEYS.seenAt] -= 31 * 60_000
        await db
          .from('sessions')
          .where('id', row.id)
          .update({ data: JSON.stringify(data) })
      }
    }
    assert.equal((await agent.get('/')).location, '/admin/login')
    assert.include(
      pageText((await agent.get('/login')).text),
      'signed out after a period without activity'
    )

    const fresh = await AdminAgent.signIn(admin)
    const copied = new AdminAgent()
    copied.cookies = new Map(fresh.cookies)
    const out = await fresh.submit('/logout', {}, '/')
    assert.equal(out.location, '/admin/login')
    // The cookie copied before signing out is worth nothing now.
    assert.equal((await copied.get('/')).location, '/admin/login')
    assert.include(
      (await auditActions()).map((row) => row.action),
      'auth.logout'
    )
  })

  test('an unknown console page is a 404 page of the console, not the API envelope', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    const page = await agent.get('/no-such-page')
    assert.equal(page.status, 404)
    assert.include(page.headers.get('content-type')!, 'text/html')
    assert.include(pageText(page.text), 'Page not found')
    assert.include(page.headers.get('content-security-policy')!, "frame-ancestors 'none'")
  })

  test('a viewer reads but every write outside the own account is refused with 403', async ({
    assert,
  }) => {
    const viewer = await createAdminUser({ role: 'viewer' })
    const agent = await AdminAgent.signIn(viewer)
    const home = await agent.get('/')
    assert.equal(home.status, 200)
    assert.include(pageText(home.text), 'Read-only access')
    const users = await agent.get('/users')
    assert.equal(users.status, 200)
    const refused = await agent.post('/users', { email: 'intruder@example.com', role: 'admin' })
    assert.equal(refused.status, 403)
    assert.include(pageText(refused.text), 'not change anything')
    assert.isNull(await db.from('users').where('email', 'intruder@example.com').first())
    const demote = await agent.post(`/users/${viewer.user.id}/role`, { role: 'admin' })
    assert.equal(demote.status, 403)
    assert.equal((await db.from('users').where('id', viewer.user.id).first()).role, 'viewer')
    // Their own account is theirs.
    const start = await agent.submit('/account/2fa/start', { password: ADMIN_PASSWORD }, '/account')
    assert.equal(start.location, '/admin/account/2fa')
  })
})

test.group('Console users page', (group) => {
  group.each.setup(() => resetDatabase())

  test('an admin adds a user (password shown once), changes a role, resets 2FA; the last admin cannot be demoted', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    const created = await agent.submit('/users', {
      email: 'New.Viewer@Example.com',
      role: 'viewer',
    })
    assert.equal(created.status, 200)
    const password = /id="new-password">([^<]+)</.exec(created.text)![1]
    assert.isAtLeast(password.length, 12)
    const list = await agent.get('/users')
    assert.include(pageText(list.text), 'new.viewer@example.com')
    assert.notInclude(list.text, password)
    await AdminAgent.signIn({ email: 'new.viewer@example.com', password })

    const taken = await agent.submit('/users', { email: 'NEW.viewer@example.com', role: 'admin' })
    assert.equal(taken.location, '/admin/users')
    assert.include(pageText((await agent.get('/users')).text), 'already exists')

    const badRole = await agent.submit('/users', { email: 'x@example.com', role: 'owner' })
    assert.equal(badRole.location, '/admin/users')
    assert.isNull(await db.from('users').where('email', 'x@example.com').first())

    const others = await db
      .from('users')
      .where('role', 'admin')
      .whereNot('id', admin.user.id)
      .select('id')
    for (const other of others)
      await agent.submit(`/users/${other.id}/role`, { role: 'viewer' }, '/users')
    const lastAdmin = await agent.submit(
      `/users/${admin.user.id}/role`,
      { role: 'viewer' },
      '/users'
    )
    assert.equal(lastAdmin.location, '/admin/users')
    assert.include(pageText((await agent.get('/users')).text), 'is the last admin')
    assert.equal((await db.from('users').where('id', admin.user.id).first()).role, 'admin')

    const withTotp = await createAdminUser({ totp: true })
    const reset = await agent.submit(
      `/users/${withTotp.user.id}/2fa-reset`,
      { password: ADMIN_PASSWORD },
      '/users'
    )
    assert.equal(reset.location, '/admin/users')
    assert.isNull((await db.from('users').where('id', withTotp.user.id).first()).totp_enabled_at)
    const audited = await db.from('audit_log').where('action', 'user.2fa_reset').first()
    assert.equal(audited.actor, admin.email)
    assert.equal((await agent.post('/users/999999/role', { role: 'admin' })).status, 404)
  })
})

test.group('Console under another path', () => {
  test('ADMIN_PATH moves the console; https APP_URL makes the cookie Secure; a bad ADMIN_PATH stops the start', async ({
    assert,
  }) => {
    const server = await startServerProcess({
      ADMIN_PATH: '/ops/console/',
      APP_URL: 'https://pay.example.com',
    })
    try {
      const moved = await fetch(`${server.url}/ops/console/login`)
      assert.equal(moved.status, 200)
      const cookie = moved.headers
        .getSetCookie()
        .find((line) => line.startsWith('gateway_console='))!
      assert.match(cookie, /Path=\/ops\/console/)
      assert.match(cookie, /Secure/)
      assert.include(await moved.text(), 'action="/ops/console/login"')
      assert.equal((await fetch(`${server.url}/admin/login`)).status, 404)
    } finally {
      await server.stop()
    }
    await assert.rejects(
      () => startServerProcess({ ADMIN_PATH: '/payments/admin' }),
      /ADMIN_PATH cannot be under \/payments/
    )
  })
})
