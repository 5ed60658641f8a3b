import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import hash from '@adonisjs/core/services/hash'
import { Scrypt } from '@adonisjs/core/hash/drivers/scrypt'
import { resetDatabase } from '#tests/helpers/database'
import { ADMIN_PASSWORD, AdminAgent, createAdminUser } from '#tests/helpers/admin'
import { PASSWORD_SCRYPT, TEST_PASSWORD_SCRYPT } from '#config/hash'

const prefix = (cost: number) => `$scrypt$n=${cost},r=8,p=1$`
/** What this run hashes with (NODE_ENV=test: the lighter cost, see config/hash.ts). */
const CONFIGURED = prefix(TEST_PASSWORD_SCRYPT.cost)

async function storedHash(id: number): Promise<string> {
  return (await db.from('users').where('id', id).first()).password
}

test.group('Console password hashing', (group) => {
  group.each.setup(() => resetDatabase())

  test("passwords are hashed with OWASP's scrypt parameters; such a hash verifies within maxMemory", async ({
    assert,
  }) => {
    assert.deepInclude(PASSWORD_SCRYPT, { cost: 2 ** 17, blockSize: 8, parallelization: 1 })
    assert.isAbove(
      PASSWORD_SCRYPT.maxMemory,
      128 * PASSWORD_SCRYPT.cost * PASSWORD_SCRYPT.blockSize
    )
    const owasp = await new Scrypt(PASSWORD_SCRYPT).make(ADMIN_PASSWORD)
    assert.isTrue(owasp.startsWith(prefix(131072)))
    // The application's hasher verifies it (a maxMemory too low would answer false).
    assert.isTrue(await hash.use('scrypt').verify(owasp, ADMIN_PASSWORD))
    assert.isFalse(await hash.use('scrypt').verify(owasp, 'another password'))
  })

  test('new passwords get the configured parameters, recovery codes the lighter ones', async ({
    assert,
  }) => {
    const admin = await createAdminUser({ totp: true })
    assert.isTrue((await storedHash(admin.user.id)).startsWith(CONFIGURED))
    const codes: string[] = JSON.parse(
      (await db.from('users').where('id', admin.user.id).first()).recovery_codes
    )
    assert.lengthOf(codes, 10)
    for (const code of codes) assert.isTrue(code.startsWith(prefix(16384)))
  })

  test('a hash made with other parameters is redone at the next sign-in, without ending sessions or counting as a change', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const former = await new Scrypt({ ...TEST_PASSWORD_SCRYPT, cost: 8192 }).make(ADMIN_PASSWORD)
    await db.from('users').where('id', admin.user.id).update({ password: former })
    const changedAt = (await db.from('users').where('id', admin.user.id).first())
      .password_changed_at

    // A wrong password leaves it as it is.
    const wrong = await new AdminAgent().submit('/login', {
      email: admin.email,
      password: 'not the password at all',
    })
    assert.equal(wrong.location, '/admin/login')
    assert.equal(await storedHash(admin.user.id), former)

    const first = await AdminAgent.signIn(admin)
    const rehashed = await storedHash(admin.user.id)
    assert.isTrue(rehashed.startsWith(CONFIGURED))
    assert.equal(
      (await db.from('users').where('id', admin.user.id).first()).password_changed_at,
      changedAt
    )
    assert.lengthOf(await db.from('audit_log').where('action', 'user.password'), 0)

    // Still the same password; the session opened before is still valid.
    const second = await AdminAgent.signIn(admin)
    assert.equal((await second.get('/orders')).status, 200)
    assert.equal((await first.get('/orders')).status, 200)
    assert.equal(await storedHash(admin.user.id), rehashed)
  })
})
