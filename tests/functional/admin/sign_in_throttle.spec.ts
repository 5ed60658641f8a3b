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
import { LOGIN_LIMITS, loginThrottle } from '#admin/login_throttle'
import { AdminUsers } from '#services/operators/admin_users'
import { TwoFactor } from '#services/operators/two_factor'

/** Counts calls of `Class.prototype[method]` until restore(). */
function countCalls<T extends object>(target: T, method: keyof T & string) {
  const original = (target as any)[method]
  const counter = {
    calls: 0,
    restore: () => ((target as any)[method] = original),
  }
  ;(target as any)[method] = function (this: unknown, ...args: unknown[]) {
    counter.calls += 1
    return original.apply(this, args)
  }
  return counter
}

function from(ip: string) {
  const agent = new AdminAgent()
  agent.headers = { 'x-forwarded-for': ip }
  return agent
}

async function actions(name: string) {
  return db
    .from('audit_log')
    .where('action', name)
    .orderBy('id')
    .select('actor', 'subject_id', 'after', 'ip')
}

test.group('Console sign-in throttle', (group) => {
  group.each.setup(() => resetDatabase())

  test('20 parallel wrong passwords: only the limit is checked, the rest refused unchecked; then the right one is refused too', async ({
    assert,
    cleanup,
  }) => {
    const admin = await createAdminUser()
    const agents = Array.from({ length: 20 }, () => new AdminAgent())
    for (const agent of agents) await agent.get('/login')
    const verify = countCalls(AdminUsers.prototype, 'verifyCredentials')
    cleanup(() => verify.restore())

    const answers = await Promise.all(
      agents.map((agent, n) =>
        agent.post('/login', { email: admin.email, password: `wrong password ${n}` })
      )
    )
    verify.restore()
    assert.equal(verify.calls, LOGIN_LIMITS.accountIp.requests)
    assert.equal(
      answers.filter((answer) => answer.status === 302).length,
      LOGIN_LIMITS.accountIp.requests
    )
    const refused = answers.filter((answer) => answer.status === 429)
    assert.lengthOf(refused, 20 - LOGIN_LIMITS.accountIp.requests)
    for (const answer of refused)
      assert.match(pageText(answer.text), /Too many failed attempts\. Try again in \d+ s\./)

    const right = await new AdminAgent().submit('/login', {
      email: admin.email,
      password: ADMIN_PASSWORD,
    })
    assert.equal(right.status, 429)
    assert.isAbove(Number(right.headers.get('retry-after')), 60)

    // Every attempt is in the audit log: the checked ones as failures, the others as throttled.
    assert.lengthOf(await actions('auth.login_failed'), LOGIN_LIMITS.accountIp.requests)
    const throttled = await actions('auth.login_throttled')
    assert.lengthOf(throttled, 20 - LOGIN_LIMITS.accountIp.requests + 1)
    assert.equal(throttled[0].actor, 'anonymous')
    assert.equal(throttled[0].ip, '127.0.0.1')
    assert.include(throttled[0].after, admin.email)
    assert.include(throttled[0].after, 'password')
    assert.lengthOf(await actions('auth.login'), 0)
  })

  test('20 parallel wrong second-factor codes: only what is left of the limit is checked; then the right code is refused', async ({
    assert,
    cleanup,
  }) => {
    const admin = await createAdminUser({ totp: true })
    const agent = new AdminAgent()
    const first = await agent.submit('/login', { email: admin.email, password: ADMIN_PASSWORD })
    assert.equal(first.location, '/admin/login/2fa')
    await agent.get('/login/2fa')
    const wrong = currentTotp(admin.totpSecret!) === '000000' ? '111111' : '000000'
    const verify = countCalls(TwoFactor.prototype, 'verify')
    cleanup(() => verify.restore())

    const answers = await Promise.all(
      Array.from({ length: 20 }, () => agent.post('/login/2fa', { code: wrong }))
    )
    verify.restore()
    // The password step used one attempt of this client's five.
    const allowed = LOGIN_LIMITS.accountIp.requests - 1
    assert.equal(verify.calls, allowed)
    assert.equal(answers.filter((answer) => answer.status === 302).length, allowed)
    assert.equal(answers.filter((answer) => answer.status === 429).length, 20 - allowed)

    const right = await agent.post('/login/2fa', { code: currentTotp(admin.totpSecret!) })
    assert.equal(right.status, 429)
    assert.equal((await agent.get('/')).location, '/admin/login')
    const throttled = await actions('auth.login_throttled')
    assert.lengthOf(throttled, 20 - allowed + 1)
    assert.equal(throttled[0].subject_id, String(admin.user.id))
    assert.include(throttled[0].after, 'second factor')
  })

  test('a client locked out of an account does not lock it for others: the account still signs in from another IP', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const attacker = from('198.51.100.7')
    for (let attempt = 0; attempt < LOGIN_LIMITS.accountIp.requests; attempt++) {
      assert.equal(
        (
          await attacker.submit('/login', {
            email: admin.email,
            password: `guess number ${attempt}`,
          })
        ).status,
        302
      )
    }
    assert.equal(
      (await attacker.submit('/login', { email: admin.email, password: ADMIN_PASSWORD })).status,
      429
    )
    // Hammering on while locked does not count towards the account-wide ceiling.
    for (let attempt = 0; attempt < 10; attempt++) {
      assert.equal(
        (await attacker.submit('/login', { email: admin.email, password: 'still guessing' }))
          .status,
        429
      )
    }

    const owner = from('203.0.113.9')
    const signedIn = await owner.submit('/login', {
      email: admin.email,
      password: ADMIN_PASSWORD,
    })
    assert.equal(signedIn.location, '/admin')
    assert.equal((await owner.get('/')).status, 200)
    assert.equal(
      (await attacker.submit('/login', { email: admin.email, password: ADMIN_PASSWORD })).status,
      429
    )
  })

  test('guessing spread over many IPs meets the account-wide ceiling; the window passes and the owner gets in', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const perIp = LOGIN_LIMITS.accountIp.requests
    for (let n = 0; n < LOGIN_LIMITS.account.requests; n++) {
      assert.equal(
        await loginThrottle.attempt(`192.0.2.${Math.floor(n / perIp) + 1}`, admin.email),
        0
      )
    }
    const owner = from('203.0.113.9')
    const refused = await owner.submit('/login', { email: admin.email, password: ADMIN_PASSWORD })
    assert.equal(refused.status, 429)
    const seconds = Number(refused.headers.get('retry-after'))
    assert.isAbove(seconds, 15 * 60)
    assert.isAtMost(seconds, 3600)
    // Other accounts are not concerned.
    const other = await createAdminUser()
    assert.equal(
      (
        await from('203.0.113.9').submit('/login', {
          email: other.email,
          password: ADMIN_PASSWORD,
        })
      ).location,
      '/admin'
    )

    // When the hour is over, the ceiling is gone.
    await db
      .from('rate_limits')
      .where('key', 'like', '%console_login_account:%')
      .update({ expire: Date.now() - 1 })
    assert.equal(
      (
        await from('203.0.113.9').submit('/login', {
          email: admin.email,
          password: ADMIN_PASSWORD,
        })
      ).location,
      '/admin'
    )
  })

  test('a successful sign-in clears the client count: four mistakes, in, four more mistakes, in again', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = new AdminAgent()
    for (let round = 0; round < 2; round++) {
      for (let attempt = 0; attempt < LOGIN_LIMITS.accountIp.requests - 1; attempt++) {
        assert.equal(
          (
            await agent.submit('/login', {
              email: admin.email,
              password: `typo ${round}-${attempt}`,
            })
          ).location,
          '/admin/login'
        )
      }
      assert.equal(
        (await agent.submit('/login', { email: admin.email, password: ADMIN_PASSWORD })).location,
        '/admin'
      )
      await agent.submit('/logout', {}, '/')
    }
    const rows = await db
      .from('rate_limits')
      .where('key', 'like', '%console_login_account:%')
      .select('points')
    assert.equal(Number(rows[0].points), 2 * (LOGIN_LIMITS.accountIp.requests - 1))
  })
})

test.group('Console sign-in audit', (group) => {
  group.each.setup(() => resetDatabase())

  test('starting a two-factor enrolment is in the audit log, under the user who started it', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    assert.lengthOf(await actions('user.2fa_start'), 0)
    const start = await agent.submit('/account/2fa/start', { password: ADMIN_PASSWORD }, '/account')
    assert.equal(start.location, '/admin/account/2fa')
    const [row] = await actions('user.2fa_start')
    assert.equal(row.actor, admin.email)
    assert.equal(row.subject_id, String(admin.user.id))
    assert.equal(row.ip, '127.0.0.1')
    // The secret itself is never in the log.
    const user = await db.from('users').where('id', admin.user.id).first()
    assert.isNotNull(user.totp_secret)
    assert.notInclude(row.after, user.totp_secret)
    const page = await agent.get('/audit')
    assert.include(pageText(page.text), 'Two-factor enrolment started')
  })
})
