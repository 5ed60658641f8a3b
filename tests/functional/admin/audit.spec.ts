import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { actingAs } from '#services/audit/audit_context'
import rateAdmin from '#services/operators/rate_admin'
import { countRows, emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { ADMIN_PASSWORD, AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'

const DAY = 86_400_000

/** The text of the audit table's rows, one string per row. */
function tableRows(html: string): string[] {
  const body = html.slice(html.indexOf('<tbody>'), html.indexOf('</tbody>'))
  return body
    .split('</tr>')
    .filter((row) => row.includes('<td'))
    .map((row) => pageText(row))
}

async function insertRows(rows: Record<string, unknown>[]) {
  await db.table('audit_log').multiInsert(
    rows.map((row) => ({
      actor_kind: 'ace',
      actor: 'ace:deploy',
      action: 'rate.set',
      subject_type: 'rate',
      subject_id: 'USDT/CNY',
      ...row,
    }))
  )
}

test.group('Console audit log page', (group) => {
  group.each.setup(() => resetDatabase())

  test('a viewer reads it: sign-ins and changes, with who, before → after, IP and request id', async ({
    assert,
  }) => {
    const viewer = await createAdminUser({ role: 'viewer' })
    const rates = rateAdmin
    await actingAs({ actor: { kind: 'ace', osUser: 'deploy' } }, async () => {
      await rates.set('usdt', 'cny', '7.25')
      await rates.set('usdt', 'cny', '7.5')
    })
    // A failed sign-in, then the viewer's own.
    const stranger = new AdminAgent()
    await stranger.submit('/login', {
      email: 'Nobody@Example.com',
      password: 'wrong password here',
    })
    const agent = await AdminAgent.signIn(viewer)

    const page = await agent.get('/audit')
    assert.equal(page.status, 200)
    const rows = tableRows(page.text)
    assert.match(
      rows[0],
      new RegExp(
        `UTC just now ${viewer.email} console Signed in auth\\.login Admin user ${viewer.email} \\(#\\d+\\) email ${viewer.email} method password 127\\.0\\.0\\.1 \\S+`
      )
    )
    assert.match(
      rows[1],
      /Not signed in visitor Sign-in failed auth\.login_failed Sign-in as nobody@example\.com email nobody@example\.com reason wrong e-mail or password 127\.0\.0\.1/
    )
    assert.include(
      rows[2],
      'deploy shell (node ace) Rate set rate.set Rate USDT/CNY rate from 7.25 → to 7.5 — —'
    )
    assert.include(
      rows[3],
      'Rate set rate.set Rate USDT/CNY token USDT fiat CNY rate 7.25 source fixed'
    )
    assert.include(page.text, '<del>7.25</del>')
    assert.include(page.text, '<ins>7.5</ins>')
    // The sign-in row carries the request's id, the same the response was given.
    const [login] = await db.from('audit_log').where('action', 'auth.login').select('request_id')
    assert.include(rows[0], login.request_id)
  })

  test('filters: action group, one action, who (any case), subject, IP and days; the form keeps them', async ({
    assert,
  }) => {
    const admin = await createAdminUser({ email: 'ops@example.com' })
    const agent = await AdminAgent.signIn(admin)
    const now = Date.now()
    await insertRows([
      { created_at: now - 40 * DAY, subject_id: 'OLD/CNY', ip: '198.51.100.7' },
      {
        created_at: now - 10 * DAY,
        action: 'wallet.add',
        subject_type: 'wallet',
        subject_id: 'tron/TAbc',
        ip: '198.51.100.7',
      },
      {
        created_at: now - 2 * DAY,
        action: 'api_key.rotate',
        subject_type: 'api_key',
        subject_id: '1000',
        actor_kind: 'user',
        actor: 'ops@example.com',
      },
    ])

    const signIns = tableRows((await agent.get('/audit?action=auth.*')).text)
    assert.isNotEmpty(signIns)
    assert.isTrue(signIns.every((row) => row.includes('auth.login')))

    const rotations = await agent.get('/audit?action=api_key.rotate')
    assert.deepEqual(
      tableRows(rotations.text).map((row) => row.includes('API key 1000')),
      [true]
    )
    assert.match(rotations.text, /<option value="api_key\.rotate" selected>/)

    const byActor = tableRows(
      (await agent.get('/audit?actor=OPS@Example.com&subject_type=api_key')).text
    )
    assert.lengthOf(byActor, 1)
    assert.include(byActor[0], 'API key secret rotated')

    const bySubject = tableRows(
      (await agent.get('/audit?subject_type=wallet&subject_id=tron/TAbc')).text
    )
    assert.lengthOf(bySubject, 1)
    const byIp = tableRows((await agent.get('/audit?ip=198.51.100.7')).text)
    assert.lengthOf(byIp, 2)

    const day = (offset: number) => new Date(now - offset * DAY).toISOString().slice(0, 10)
    const range = await agent.get(`/audit?from=${day(11)}&to=${day(9)}&ip=198.51.100.7`)
    const inRange = tableRows(range.text)
    assert.lengthOf(inRange, 1)
    assert.include(inRange[0], 'tron/TAbc')
    assert.include(range.text, `value="${day(11)}"`)
    assert.include(range.text, 'href="/admin/audit">Clear</a>')
  })

  test('nothing matching: the empty state says so and offers to clear', async ({ assert }) => {
    const agent = await AdminAgent.signIn(await createAdminUser())
    const page = await agent.get('/audit?action=wallet.*')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.include(text, 'No entry matches these filters')
    assert.include(text, 'Clear the filters')
    assert.notInclude(page.text, '<tbody>')
  })

  test('an empty log: a sentence on what will appear', async ({ assert }) => {
    const agent = await AdminAgent.signIn(await createAdminUser())
    await emptyAuditLog()
    const text = pageText((await agent.get('/audit')).text)
    assert.include(text, 'The audit log is empty')
    assert.include(text, 'Every change made in this console or with node ace')
  })

  test('bad filters: the form says what is wrong (422), nothing is listed, no error page', async ({
    assert,
  }) => {
    const agent = await AdminAgent.signIn(await createAdminUser())
    const impossible = await agent.get('/audit?from=2025-02-30')
    assert.equal(impossible.status, 422)
    assert.include(pageText(impossible.text), 'Use a date like 2025-06-15 (year-month-day).')
    assert.include(impossible.text, 'aria-invalid="true"')
    assert.notInclude(impossible.text, '<tbody>')

    const reversed = await agent.get('/audit?from=2025-06-15&to=2025-06-01')
    assert.equal(reversed.status, 422)
    assert.include(pageText(reversed.text), 'The end date is before the start date.')

    const long = await agent.get(`/audit?subject_id=${'x'.repeat(300)}`)
    assert.equal(long.status, 422)
    assert.include(pageText(long.text), 'At most 255 characters.')

    // A cursor that is not one of ours is ignored: the first page.
    const garbage = await agent.get('/audit?after=not-a-cursor')
    assert.equal(garbage.status, 200)
    assert.isNotEmpty(tableRows(garbage.text))
  })

  test('pages: 50 newest first, then the rest, without a row twice or missed; filters kept across pages', async ({
    assert,
  }) => {
    const agent = await AdminAgent.signIn(await createAdminUser())
    const now = Date.now() - 60_000
    // Same millisecond for several: the cursor orders by id too.
    await insertRows(
      Array.from({ length: 62 }, (_, index) => ({
        created_at: now - Math.floor(index / 3),
        subject_id: `S${index}`,
      }))
    )

    const first = await agent.get('/audit?action=rate.set')
    const firstRows = tableRows(first.text)
    assert.lengthOf(firstRows, 50)
    const next = /<a class="btn btn-secondary btn-small" href="([^"]+)" rel="next">/
      .exec(first.text)![1]
      .replace(/&amp;/g, '&')
    assert.match(next, /^\/admin\/audit\?action=rate\.set&after=/)
    assert.notInclude(first.text, 'First page')

    const second = await agent.get(next)
    const secondRows = tableRows(second.text)
    assert.lengthOf(secondRows, 12)
    assert.notMatch(second.text, /rel="next"/)
    assert.include(second.text, 'href="/admin/audit?action=rate.set">« First page</a>')

    // Newest first; within a millisecond, the later row (higher id) first.
    const expected = Array.from({ length: 21 }, (_, millisecond) => [
      3 * millisecond + 2,
      3 * millisecond + 1,
      3 * millisecond,
    ])
      .flat()
      .filter((index) => index < 62)
      .map((index) => `S${index}`)
    const ids = [...firstRows, ...secondRows].map((row) => /Rate (S\d+)/.exec(row)![1])
    assert.deepEqual(ids, expected)
  })

  test('read only: no route edits or deletes a row, for an admin either', async ({ assert }) => {
    const agent = await AdminAgent.signIn(await createAdminUser())
    await agent.get('/audit')
    const before = await countRows('audit_log')
    const [row] = await db.from('audit_log').select('id').limit(1)
    for (const path of [
      '/audit',
      `/audit/${row.id}`,
      `/audit/${row.id}/delete`,
      `/audit/${row.id}/edit`,
    ]) {
      const response = await agent.post(path, { action: 'forged' })
      assert.equal(response.status, 404, path)
    }
    assert.equal(await countRows('audit_log'), before)
    assert.equal(
      (await db.from('audit_log').where('action', 'forged').count('* as total'))[0].total,
      0
    )
  })

  test('escaped: a subject id with markup is shown as text', async ({ assert }) => {
    const agent = await AdminAgent.signIn(await createAdminUser({ password: ADMIN_PASSWORD }))
    await insertRows([
      {
        created_at: Date.now(),
        subject_id: '<img src=x onerror=alert(1)>',
        after: JSON.stringify({ note: '<b>bold</b>' }),
      },
    ])
    const page = await agent.get('/audit?action=rate.set')
    assert.notInclude(page.text, '<img src=x')
    assert.notInclude(page.text, '<b>bold</b>')
    assert.include(page.text, '&lt;img src=x onerror=alert(1)&gt;')
  })
})
