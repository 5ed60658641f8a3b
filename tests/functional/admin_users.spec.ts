import { test } from '@japa/runner'
import hash from '@adonisjs/core/services/hash'
import db from '@adonisjs/lucid/services/db'
import User from '#models/user'
import adminUsers from '#services/operators/admin_users'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { runCommand } from '#tests/helpers/ace_command'
import AdminCreate from '#commands/admin_create'
import AdminPassword from '#commands/admin_password'
import Admin2faReset from '#commands/admin_2fa_reset'
import AdminList from '#commands/admin_list'
import AdminRole from '#commands/admin_role'
import { normalizeUsers } from '#database/migrations/1763700000030_admin_users'

/** bin/test.ts installs admin@example.test with this password. */
const INSTALLED = 'admin@example.test'
const INSTALLED_PASSWORD = 'test-admin-password'

function printedPassword(output: string) {
  const match = output.match(/password: (\S+)/)
  return match?.[1] ?? null
}

test.group('Admin users: admin:create', (group) => {
  group.each.setup(() => resetDatabase())

  test('creates an admin with a random password printed once, stored as scrypt, e-mail lower-cased', async ({
    assert,
  }) => {
    const { exitCode, output } = await runCommand(AdminCreate, ['  Ops@Example.TEST '])
    assert.equal(exitCode, 0)
    const user = await User.findByOrFail('email', 'ops@example.test')
    assert.equal(user.role, 'admin')
    const password = printedPassword(output)
    assert.isNotNull(password)
    assert.isAtLeast(password!.length, 12)
    assert.match(user.password, /^\$scrypt\$/)
    assert.notInclude(user.password, password!)
    assert.isTrue(await hash.verify(user.password, password!))
    assert.isNumber(user.passwordChangedAt)
  })

  test('--role viewer and --password are taken; the password is not printed back', async ({
    assert,
  }) => {
    const { exitCode, output } = await runCommand(AdminCreate, [
      'viewer@example.test',
      '--role=viewer',
      '--password=correct horse battery',
    ])
    assert.equal(exitCode, 0)
    assert.notInclude(output, 'correct horse battery')
    const user = await User.findByOrFail('email', 'viewer@example.test')
    assert.equal(user.role, 'viewer')
    assert.isTrue(await hash.verify(user.password, 'correct horse battery'))
  })

  test('refusals: taken e-mail in another case, bad e-mail, bad role, short or blank password', async ({
    assert,
  }) => {
    const cases: [string[], RegExp][] = [
      [['ADMIN@Example.Test'], /already exists/],
      [['not-an-email'], /is not an e-mail address/],
      [['x@example.test', '--role=root'], /role must be one of: admin, viewer/],
      [['x@example.test', '--password=short'], /at least 12 characters/],
      [['x@example.test', '--password=              '], /cannot be empty or blank/],
    ]
    for (const [argv, message] of cases) {
      const { exitCode, output } = await runCommand(AdminCreate, argv)
      assert.equal(exitCode, 1, argv.join(' '))
      assert.match(output, message)
    }
    assert.equal(await countRows('users'), 1)
  })

  test('the database refuses a mixed-case duplicate written around the service', async ({
    assert,
  }) => {
    const now = Date.now()
    await assert.rejects(() =>
      db.table('users').insert({
        email: 'Admin@example.test',
        password: 'x',
        role: 'admin',
        created_at: now,
        updated_at: now,
      })
    )
  })
})

test.group('Admin users: password, role, 2fa, list', (group) => {
  group.each.setup(() => resetDatabase())

  test('admin:password sets the given password, moves password_changed_at; any case of the e-mail', async ({
    assert,
  }) => {
    const before = (await User.findByOrFail('email', INSTALLED)).passwordChangedAt!
    await new Promise((resolve) => setTimeout(resolve, 2))
    const { exitCode } = await runCommand(AdminPassword, [
      'ADMIN@EXAMPLE.TEST',
      '--password=a new long password',
    ])
    assert.equal(exitCode, 0)
    const user = await User.findByOrFail('email', INSTALLED)
    assert.isTrue(await hash.verify(user.password, 'a new long password'))
    assert.isAbove(user.passwordChangedAt!, before)
  })

  test('admin:password without --password prints a random one that works', async ({ assert }) => {
    const { exitCode, output } = await runCommand(AdminPassword, [INSTALLED])
    assert.equal(exitCode, 0)
    const users = adminUsers
    assert.isNotNull(await users.verifyCredentials(INSTALLED, printedPassword(output)!))
    assert.isNull(await users.verifyCredentials(INSTALLED, INSTALLED_PASSWORD))
  })

  test('admin:password refuses an unknown e-mail and a short password, changing nothing', async ({
    assert,
  }) => {
    const unknown = await runCommand(AdminPassword, [
      'nobody@example.test',
      '--password=long enough password',
    ])
    assert.equal(unknown.exitCode, 1)
    assert.match(unknown.output, /No administrator has the e-mail nobody@example.test/)
    const short = await runCommand(AdminPassword, [INSTALLED, '--password=tiny'])
    assert.equal(short.exitCode, 1)
    assert.match(short.output, /at least 12 characters/)
    const user = await User.findByOrFail('email', INSTALLED)
    assert.isTrue(await hash.verify(user.password, INSTALLED_PASSWORD))
  })

  test('admin:role demotes and promotes, never the last admin; refuses a bad role and an unknown user', async ({
    assert,
  }) => {
    const last = await runCommand(AdminRole, [INSTALLED, 'viewer'])
    assert.equal(last.exitCode, 1)
    assert.match(last.output, /last admin/)
    assert.equal((await User.findByOrFail('email', INSTALLED)).role, 'admin')

    assert.equal((await runCommand(AdminCreate, ['second@example.test'])).exitCode, 0)
    assert.equal((await runCommand(AdminRole, [INSTALLED, 'viewer'])).exitCode, 0)
    assert.equal((await User.findByOrFail('email', INSTALLED)).role, 'viewer')
    assert.equal((await runCommand(AdminRole, [INSTALLED, 'admin'])).exitCode, 0)
    assert.equal((await User.findByOrFail('email', INSTALLED)).role, 'admin')

    const bad = await runCommand(AdminRole, [INSTALLED, 'owner'])
    assert.equal(bad.exitCode, 1)
    assert.match(bad.output, /role must be one of/)
    assert.equal((await runCommand(AdminRole, ['nobody@example.test', 'viewer'])).exitCode, 1)
  })

  test('two admins demoting each other at once: one admin remains', async ({ assert }) => {
    await runCommand(AdminCreate, ['second@example.test'])
    const users = adminUsers
    const results = await Promise.allSettled([
      users.setRole(INSTALLED, 'viewer'),
      users.setRole('second@example.test', 'viewer'),
    ])
    assert.equal(results.filter((result) => result.status === 'fulfilled').length, 1)
    assert.equal(await countRows('users', { role: 'admin' }), 1)
  })

  test('admin:2fa:reset clears the secret, the step and the recovery codes; unknown e-mail refused', async ({
    assert,
  }) => {
    const user = await User.findByOrFail('email', INSTALLED)
    user.merge({
      totpSecret: 'sealed',
      totpEnabledAt: Date.now(),
      totpLastStep: 5,
      recoveryCodes: '["h"]',
    })
    await user.save()
    const { exitCode, output } = await runCommand(Admin2faReset, [INSTALLED])
    assert.equal(exitCode, 0)
    assert.match(output, /turned off/)
    const after = await User.findByOrFail('email', INSTALLED)
    assert.deepEqual(
      [after.totpSecret, after.totpEnabledAt, after.totpLastStep, after.recoveryCodes],
      [null, null, null, null]
    )
    const again = await runCommand(Admin2faReset, [INSTALLED])
    assert.equal(again.exitCode, 0)
    assert.match(again.output, /nothing changed/)
    const unknown = await runCommand(Admin2faReset, ['nobody@example.test'])
    assert.equal(unknown.exitCode, 1)
    assert.match(unknown.output, /No administrator/)
  })

  test('admin:list shows users and roles, never a password hash', async ({ assert }) => {
    await runCommand(AdminCreate, ['viewer@example.test', '--role=viewer'])
    const { exitCode, output } = await runCommand(AdminList, [])
    assert.equal(exitCode, 0)
    assert.include(output, INSTALLED)
    assert.match(output, /viewer@example\.test.*viewer/)
    assert.notInclude(output, '$scrypt$')
  })
})

test.group('Admin users: verifyCredentials', (group) => {
  group.each.setup(() => resetDatabase())

  test('matches any case of the e-mail; wrong password, unknown and malformed e-mails give null', async ({
    assert,
  }) => {
    const users = adminUsers
    assert.equal(
      (await users.verifyCredentials(' Admin@Example.Test', INSTALLED_PASSWORD))?.email,
      INSTALLED
    )
    assert.isNull(await users.verifyCredentials(INSTALLED, 'wrong password here'))
    assert.isNull(await users.verifyCredentials('nobody@example.test', INSTALLED_PASSWORD))
    assert.isNull(await users.verifyCredentials('not an email', INSTALLED_PASSWORD))
  })

  test('an unknown e-mail costs a scrypt verification too', async ({ assert }) => {
    const users = adminUsers
    const scrypt = hash.use('scrypt')
    const original = scrypt.verify.bind(scrypt)
    let verifications = 0
    scrypt.verify = async (hashed: string, plain: string) => {
      verifications++
      return original(hashed, plain)
    }
    try {
      await users.verifyCredentials('nobody@example.test', 'whatever password')
      await users.verifyCredentials('nobody2@example.test', 'whatever password')
    } finally {
      scrypt.verify = original
    }
    assert.equal(verifications, 2)
  })
})

test.group('Admin users: migration of existing rows', (group) => {
  group.each.setup(() => resetDatabase())

  test('keeps each user: e-mail lower-cased, unknown role made viewer, password_changed_at from updated_at', async ({
    assert,
  }) => {
    await db.from('users').update({
      email: 'Admin@Example.TEST',
      role: 'owner',
      password_changed_at: null,
      updated_at: 1234,
    })
    await normalizeUsers(db.connection())
    const user = await User.findByOrFail('email', INSTALLED)
    assert.equal(user.role, 'viewer')
    assert.equal(user.passwordChangedAt, 1234)
    assert.isTrue(await hash.verify(user.password, INSTALLED_PASSWORD))
  })

  test('two e-mails differing only by case stop the migration with both named, nothing changed', async ({
    assert,
  }) => {
    // Only possible before the lower(email) index existed: simulate that database.
    await db.rawQuery('DROP INDEX users_email_lower_unique')
    try {
      const now = Date.now()
      await db.table('users').insert({
        email: 'ADMIN@example.test',
        password: 'x',
        role: 'admin',
        created_at: now,
        updated_at: now,
      })
      await assert.rejects(
        () => normalizeUsers(db.connection()),
        /"admin@example.test" and "ADMIN@example.test" differ only by case/
      )
      assert.equal(await countRows('users', { email: 'ADMIN@example.test' }), 1)
    } finally {
      await db.from('users').where('email', 'ADMIN@example.test').delete()
      await db.rawQuery('CREATE UNIQUE INDEX users_email_lower_unique ON users (lower(email))')
    }
  })
})
