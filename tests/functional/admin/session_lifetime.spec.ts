import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { SESSION_KEYS } from '#admin/admin_session'

/** Moves the sign-in time of every signed-in console session `ms` into the past (the last activity stays now). */
async function ageSignIn(ms: number) {
  let moved = 0
  for (const row of await db.from('sessions').select('id', 'data')) {
    const data = JSON.parse(row.data)
    if (data.message?.[SESSION_KEYS.loginAt]) {
      data.message[SESSION_KEYS.loginAt] -= ms
      data.message[SESSION_KEYS.seenAt] = Date.now()
      await db
        .from('sessions')
        .where('id', row.id)
        .update({ data: JSON.stringify(data) })
      moved += 1
    }
  }
  if (moved === 0) throw new Error('no signed-in session to age')
}

test.group('Console session lifetime', (group) => {
  group.each.setup(() => resetDatabase())

  test('a session in use all along still ends 12 hours after its sign-in', async ({ assert }) => {
    const admin = await createAdminUser()
    // The password was set long before (a sign-in older than it would end for that reason).
    await db
      .from('users')
      .where('id', admin.user.id)
      .update({ password_changed_at: Date.now() - 48 * 3600_000 })
    const agent = await AdminAgent.signIn(admin)
    await ageSignIn(11 * 3600_000 + 55 * 60_000)
    // Active and younger than 12 hours: still in.
    assert.equal((await agent.get('/orders')).status, 200)
    await ageSignIn(6 * 60_000)
    const ended = await agent.get('/orders')
    assert.equal(ended.location, '/admin/login')
    assert.include(pageText((await agent.get('/login')).text), 'a session lasts at most 12 hours')
    // It is over on the server: the cookie gets nowhere, a new sign-in works.
    assert.equal((await agent.get('/')).location, '/admin/login')
    const again = await AdminAgent.signIn(admin)
    assert.equal((await again.get('/orders')).status, 200)
  })
})
