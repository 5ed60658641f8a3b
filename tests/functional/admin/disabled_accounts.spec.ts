import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import User from '#models/user'
import { resetDatabase } from '#tests/helpers/database'
import { runCommand } from '#tests/helpers/ace_command'
import {
  ADMIN_PASSWORD,
  AdminAgent,
  createAdminUser,
  currentTotp,
  pageText,
} from '#tests/helpers/admin'
import AdminCreate from '#commands/admin_create'
import AdminDisable from '#commands/admin_disable'
import AdminEnable from '#commands/admin_enable'
import AdminRole from '#commands/admin_role'
import AdminList from '#commands/admin_list'

/** bin/test.ts installs admin@example.test (an admin). */
const INSTALLED = 'admin@example.test'
const WRONG_PASSWORD = 'That e-mail and password do not match an administrator.'

function auditRows(like: string) {
  return db
    .from('audit_log')
    .where('action', 'like', like)
    .orderBy('id')
    .select('action', 'actor', 'actor_kind', 'subject_id', 'before', 'after')
}

async function disabledAt(email: string) {
  return (await User.findByOrFail('email', email.toLowerCase())).disabledAt
}

/** Signs in through the form; the page after it (the form again when refused). */
async function trySignIn(email: string, password: string) {
  const agent = new AdminAgent()
  const response = await agent.submit('/login', { email, password })
  const next = await agent.follow(response.location!)
  return { agent, response, text: pageText(next.text) }
}

test.group('Disabled accounts: the users page', (group) => {
  group.each.setup(() => resetDatabase())

  test('an admin disables another admin: badge shown, sign-in refused like a wrong password, audited with the reason', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const other = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)

    const before = await agent.get('/users')
    assert.include(before.text, `/admin/users/${other.user.id}/disable`)
    // No Disable button for oneself.
    assert.notInclude(before.text, `/admin/users/${admin.user.id}/disable`)

    const response = await agent.submit(`/users/${other.user.id}/disable`, {}, '/users')
    assert.equal(response.status, 302)
    assert.equal(response.location, '/admin/users')
    const page = await agent.get('/users')
    const text = pageText(page.text)
    assert.include(text, `${other.email} is disabled`)
    assert.include(text, 'Disabled')
    assert.include(page.text, `/admin/users/${other.user.id}/enable`)
    assert.notInclude(page.text, `/admin/users/${other.user.id}/disable`)
    assert.isNumber(await disabledAt(other.email))

    const [row] = await auditRows('user.%abled')
    assert.equal(row.action, 'user.disabled')
    assert.equal(row.actor, admin.email)
    assert.equal(row.actor_kind, 'user')
    assert.equal(row.subject_id, String(other.user.id))
    assert.deepInclude(JSON.parse(row.before), { disabled: false })
    assert.deepInclude(JSON.parse(row.after), { disabled: true })

    // Right password, disabled account: the same answer as a wrong password.
    const refused = await trySignIn(other.email, ADMIN_PASSWORD)
    assert.equal(refused.response.location, '/admin/login')
    assert.include(refused.text, WRONG_PASSWORD)
    assert.equal((await refused.agent.get('/')).location, '/admin/login')
    const wrong = await trySignIn(other.email, 'not the password at all')
    assert.include(wrong.text, WRONG_PASSWORD)
    const failures = await auditRows('auth.login_failed')
    assert.deepEqual(
      failures.map((failure) => JSON.parse(failure.after).reason),
      ['account disabled', 'wrong e-mail or password']
    )
    assert.equal(failures[0].subject_id, String(other.user.id))
    // Only the acting admin ever signed in.
    assert.deepEqual(
      (await auditRows('auth.login')).map((login) => login.actor),
      [admin.email]
    )
  })

  test('enabling restores sign-in; audited as user.enabled', async ({ assert }) => {
    const admin = await createAdminUser()
    const other = await createAdminUser({ role: 'viewer' })
    const agent = await AdminAgent.signIn(admin)
    await agent.submit(`/users/${other.user.id}/disable`, {}, '/users')
    assert.include((await trySignIn(other.email, ADMIN_PASSWORD)).text, WRONG_PASSWORD)

    const response = await agent.submit(`/users/${other.user.id}/enable`, {}, '/users')
    assert.equal(response.status, 302)
    assert.include(pageText((await agent.get('/users')).text), `${other.email} is enabled`)
    assert.isNull(await disabledAt(other.email))
    const signedIn = await AdminAgent.signIn(other)
    assert.equal((await signedIn.get('/')).status, 200)
    assert.deepEqual(
      (await auditRows('user.%abled')).map((row) => [row.action, row.actor]),
      [
        ['user.disabled', admin.email],
        ['user.enabled', admin.email],
      ]
    )
  })

  test('a signed-in session of a user who gets disabled ends on its next request', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const other = await createAdminUser()
    const victim = await AdminAgent.signIn(other)
    assert.equal((await victim.get('/users')).status, 200)

    await (await AdminAgent.signIn(admin)).submit(`/users/${other.user.id}/disable`, {}, '/users')
    const next = await victim.get('/users')
    assert.equal(next.status, 302)
    assert.equal(next.location, '/admin/login')
    assert.include(pageText((await victim.get('/login')).text), 'Your account was disabled')
    // Ended, not only refused once: enabling the account does not bring the session back.
    await User.query().where('id', other.user.id).update({ disabled_at: null })
    assert.equal((await victim.get('/')).location, '/admin/login')
    // A write of the disabled session changes nothing either.
    const admin2 = await createAdminUser()
    const again = await AdminAgent.signIn(other)
    await User.query().where('id', other.user.id).update({ disabled_at: Date.now() })
    const write = await again.post(`/users/${admin2.user.id}/disable`)
    assert.equal(write.location, '/admin/login')
    assert.isNull(await disabledAt(admin2.email))
  })

  test('a user disabled between the password and the second factor is refused at the second step', async ({
    assert,
  }) => {
    const other = await createAdminUser({ totp: true })
    const agent = new AdminAgent()
    const first = await agent.submit('/login', { email: other.email, password: ADMIN_PASSWORD })
    assert.equal(first.location, '/admin/login/2fa')
    await User.query().where('id', other.user.id).update({ disabled_at: Date.now() })
    const second = await agent.submit('/login/2fa', { code: currentTotp(other.totpSecret!) })
    assert.equal(second.location, '/admin/login/2fa')
    assert.equal((await agent.get('/')).location, '/admin/login')
    const [row] = await auditRows('auth.login_failed')
    assert.equal(JSON.parse(row.after).reason, 'account disabled')
    assert.lengthOf(await auditRows('auth.login'), 0)
  })

  test('refusals: disabling oneself, a viewer disabling, an unknown id; nothing changed', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const other = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    const self = await agent.submit(`/users/${admin.user.id}/disable`, {}, '/users')
    assert.equal(self.location, '/admin/users')
    assert.include(
      pageText((await agent.get('/users')).text),
      'You cannot disable your own account'
    )
    assert.isNull(await disabledAt(admin.email))

    const viewer = await createAdminUser({ role: 'viewer' })
    const viewerAgent = await AdminAgent.signIn(viewer)
    const forbidden = await viewerAgent.submit(`/users/${other.user.id}/disable`, {}, '/users')
    assert.equal(forbidden.status, 403)
    assert.isNull(await disabledAt(other.email))

    const unknown = await agent.submit('/users/999999/disable', {}, '/users')
    assert.equal(unknown.status, 404)
    // Without the CSRF token: refused.
    await agent.get('/users')
    const noToken = await agent.post(`/users/${other.user.id}/disable`, {}, { csrf: null })
    assert.equal(noToken.status, 403)
    assert.isNull(await disabledAt(other.email))
    assert.lengthOf(await auditRows('user.%abled'), 0)
  })
})

test.group('Disabled accounts: admin:disable and admin:enable', (group) => {
  group.each.setup(() => resetDatabase())

  test('the last enabled admin cannot be disabled nor demoted; others can, audited as the operator', async ({
    assert,
  }) => {
    const last = await runCommand(AdminDisable, [INSTALLED])
    assert.equal(last.exitCode, 1)
    assert.match(last.output, /last enabled admin/)
    assert.isNull(await disabledAt(INSTALLED))

    // A viewer does not count as an admin left.
    assert.equal(
      (await runCommand(AdminCreate, ['viewer@example.test', '--role=viewer'])).exitCode,
      0
    )
    assert.equal((await runCommand(AdminDisable, [INSTALLED])).exitCode, 1)

    assert.equal((await runCommand(AdminCreate, ['second@example.test'])).exitCode, 0)
    const done = await runCommand(AdminDisable, ['  Admin@Example.TEST '])
    assert.equal(done.exitCode, 0)
    assert.match(done.output, /admin@example.test is disabled/)
    assert.isNumber(await disabledAt(INSTALLED))

    // Now second@ is the last enabled admin: neither disabled nor demoted.
    const second = await runCommand(AdminDisable, ['second@example.test'])
    assert.equal(second.exitCode, 1)
    assert.match(second.output, /second@example.test is the last enabled admin/)
    const demote = await runCommand(AdminRole, ['second@example.test', 'viewer'])
    assert.equal(demote.exitCode, 1)
    assert.match(demote.output, /last admin/)
    assert.isNull(await disabledAt('second@example.test'))

    // A viewer can be disabled whatever the admins.
    assert.equal((await runCommand(AdminDisable, ['viewer@example.test'])).exitCode, 0)

    const rows = await auditRows('user.%abled')
    assert.deepEqual(
      rows.map((row) => row.action),
      ['user.disabled', 'user.disabled']
    )
    for (const row of rows) {
      assert.equal(row.actor_kind, 'ace')
      assert.match(row.actor, /^ace:/)
    }
  })

  test('admin:enable restores sign-in; repeated commands change nothing; unknown e-mails refused', async ({
    assert,
  }) => {
    await runCommand(AdminCreate, ['second@example.test'])
    const user = await createAdminUser()
    assert.equal((await runCommand(AdminDisable, [user.email])).exitCode, 0)
    const again = await runCommand(AdminDisable, [user.email])
    assert.equal(again.exitCode, 0)
    assert.match(again.output, /already disabled/)
    assert.include((await trySignIn(user.email, ADMIN_PASSWORD)).text, WRONG_PASSWORD)
    assert.match((await runCommand(AdminList, [])).output, /disabled/)

    const enabled = await runCommand(AdminEnable, [user.email])
    assert.equal(enabled.exitCode, 0)
    assert.match(enabled.output, /is enabled/)
    assert.isNull(await disabledAt(user.email))
    assert.equal((await (await AdminAgent.signIn(user)).get('/')).status, 200)
    const repeat = await runCommand(AdminEnable, [user.email])
    assert.equal(repeat.exitCode, 0)
    assert.match(repeat.output, /was not disabled/)

    for (const Command of [AdminDisable, AdminEnable]) {
      const unknown = await runCommand(Command, ['nobody@example.test'])
      assert.equal(unknown.exitCode, 1)
      assert.match(unknown.output, /No administrator has the e-mail nobody@example.test/)
      const bad = await runCommand(Command, ['not-an-email'])
      assert.equal(bad.exitCode, 1)
      assert.match(bad.output, /is not an e-mail address/)
    }
    assert.deepEqual(
      (await auditRows('user.%abled')).map((row) => row.action),
      ['user.disabled', 'user.enabled']
    )
  })
})
