import { test } from '@japa/runner'
import { notificationDelivery } from '#tests/helpers/notification_rows'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'
import { countRows, emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'

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

test.group('Console notifications page', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await emptyAuditLog()
  })

  test('lists every channel with its settings, the delivery settings, and an empty deliveries list', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    const page = await agent.get('/notifications')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.include(text, 'Channel: webhook')
    assert.include(text, 'Signed JSON POST to an operator URL')
    assert.include(text, 'Cannot send yet: notify.webhook.url is empty.')
    for (const key of [
      'notify.webhook.enabled',
      'notify.webhook.events',
      'notify.webhook.quiet_hours',
      'notify.webhook.url',
      'notify.webhook.secret',
      'notify.time_zone',
      'notify.max_attempts',
      'notify.callback_failing_after',
    ])
      assert.include(page.text, `data-setting="${key}"`, key)
    assert.include(text, 'No notification sent yet')
    assert.match(page.text, /href="\/admin\/notifications" aria-current="page"/)
  })

  test('the last deliveries: newest first, targets without their secrets, errors, filters', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    await notificationDelivery({
      channel: 'webhook',
      target: 'https://ops:hunter2@hooks.example/notify?token=abcdef123456',
      status: 'failed',
      attempts: 3,
      lastError: 'HTTP 404: no such hook',
      event: 'callback.gave_up',
      severity: 'critical',
    })
    await notificationDelivery({ channel: 'email', target: 'ops@example.com', status: 'delivered' })
    const page = await agent.get('/notifications')
    const text = pageText(page.text).split('Last deliveries, newest first')[1] ?? ''
    assert.notInclude(page.text, 'hunter2')
    assert.notInclude(page.text, 'abcdef123456')
    assert.include(text, 'https://***@hooks.example/notify?***')
    assert.include(text, 'ops@example.com')
    assert.include(text, 'HTTP 404: no such hook')
    assert.isBelow(text.indexOf('ops@example.com'), text.indexOf('callback.gave_up'))
    assert.notInclude(pageText(page.text), 'No notification sent yet')

    const failed = pageText((await agent.get('/notifications?status=failed')).text)
    const list = failed.split('Last deliveries, newest first')[1]
    assert.include(list, 'callback.gave_up')
    assert.notInclude(list, 'ops@example.com')
    const byChannel = pageText((await agent.get('/notifications?channel=email')).text)
    const emailOnly = byChannel.split('Last deliveries, newest first')[1]
    assert.include(emailOnly, 'ops@example.com')
    assert.notInclude(emailOnly, 'callback.gave_up')
    const none = pageText((await agent.get('/notifications?channel=email&status=failed')).text)
    assert.include(none, 'No delivery matches these filters')
  })

  test("saving a channel's form stores the values through the settings service and audits each", async ({
    assert,
  }) => {
    const { agent, user } = await signedIn()
    const saved = await agent.submit(
      '/notifications/webhook/settings',
      {
        notify__webhook__enabled: 'true',
        notify__webhook__events: 'order.*, callback.gave_up',
        notify__webhook__min_severity: 'warning',
        notify__webhook__quiet_hours: '23:00-07:00',
        notify__webhook__cap_per_hour: '20',
        notify__webhook__muted_until: '0',
        notify__webhook__url: 'https://hooks.example/notify',
        notify__webhook__secret: 'a-shared-secret-1234',
        notify__webhook__allow_private_targets: 'false',
      },
      '/notifications'
    )
    assert.equal(saved.status, 302)
    assert.equal(saved.location, '/admin/notifications#channel-webhook')
    assert.isTrue(await settings.read('notify.webhook.enabled'))
    assert.deepEqual(await settings.read('notify.webhook.events'), ['order.*', 'callback.gave_up'])
    assert.equal(await settings.read('notify.webhook.quiet_hours'), '23:00-07:00')
    assert.equal(
      revealSecret(
        String(await storedValue('notify.webhook.secret')),
        SecretPurpose.setting('notify.webhook.secret')
      ),
      'a-shared-secret-1234'
    )
    const rows = await db.from('audit_log').where('action', 'setting.set').orderBy('id')
    assert.sameMembers(
      rows.map((row) => row.subject_id),
      [
        'notify.webhook.enabled',
        'notify.webhook.events',
        'notify.webhook.min_severity',
        'notify.webhook.quiet_hours',
        'notify.webhook.url',
        'notify.webhook.secret',
      ]
    )
    for (const row of rows) assert.equal(row.actor, user.email)
    assert.notInclude(JSON.stringify(rows), 'a-shared-secret-1234')

    const page = await agent.get('/notifications')
    const text = pageText(page.text)
    assert.include(text, 'Saved the webhook channel: 6 settings changed.')
    assert.equal(inputValue(page.text, 'notify__webhook__quiet_hours'), '23:00-07:00')
    // The secret is never sent back: its field is empty, its last 4 shown.
    assert.notInclude(page.text, 'a-shared-secret-1234')
    assert.equal(inputValue(page.text, 'notify__webhook__secret'), '')
    assert.include(text, 'Stored: …1234. Leave blank to keep it.')
    assert.notInclude(text, 'Cannot send yet: notify.webhook')
  })

  test('a refused value: messages at the fields, the typed values kept, nothing stored nor audited', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    const refused = await agent.submit(
      '/notifications/webhook/settings',
      {
        notify__webhook__enabled: 'true',
        notify__webhook__events: 'bad name',
        notify__webhook__quiet_hours: '25:00-26:00',
        notify__webhook__url: 'https://hooks.example/notify',
      },
      '/notifications'
    )
    assert.equal(refused.location, '/admin/notifications#channel-webhook')
    const page = await agent.get('/notifications')
    const text = pageText(page.text)
    assert.include(text, 'Nothing was saved in the webhook channel')
    assert.include(text, 'Events "bad name" is not an event name')
    assert.include(text, 'Quiet hours must be HH:MM-HH:MM')
    assert.equal(inputValue(page.text, 'notify__webhook__quiet_hours'), '25:00-26:00')
    assert.equal(inputValue(page.text, 'notify__webhook__url'), 'https://hooks.example/notify')
    for (const key of ['enabled', 'events', 'quiet_hours', 'url'])
      assert.isUndefined(await storedValue(`notify.webhook.${key}`), key)
    assert.equal(await countRows('audit_log', { action: 'setting.set' }), 0)
  })

  test('a secret left blank is kept; "clear" empties it; both at once is refused', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    await settings.set('notify.webhook.secret', 'first-secret-wxyz')
    const stored = await storedValue('notify.webhook.secret')
    await agent.submit(
      '/notifications/webhook/settings',
      {
        notify__webhook__secret: '',
        notify__webhook__cap_per_hour: '5',
      },
      '/notifications'
    )
    assert.equal(await storedValue('notify.webhook.secret'), stored)
    assert.equal(await settings.read('notify.webhook.cap_per_hour'), 5)
    const page = await agent.get('/notifications')
    assert.notInclude(page.text, 'first-secret-wxyz')
    assert.include(pageText(page.text), 'Stored: …wxyz.')

    await agent.submit(
      '/notifications/webhook/settings',
      {
        notify__webhook__secret: 'another-one',
        clear__notify__webhook__secret: '1',
      },
      '/notifications'
    )
    assert.equal(await storedValue('notify.webhook.secret'), stored)
    assert.include(
      pageText((await agent.get('/notifications')).text),
      'type a new value or tick clear, not both'
    )

    await agent.submit(
      '/notifications/webhook/settings',
      {
        clear__notify__webhook__secret: '1',
      },
      '/notifications'
    )
    assert.equal(await storedValue('notify.webhook.secret'), '')
  })

  test('the delivery settings are saved and audited; a bad time zone saves nothing', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    await agent.submit(
      '/notifications/settings',
      {
        notify__time_zone: 'Europe/Berlin',
        notify__max_attempts: '6',
        notify__callback_failing_after: '5',
      },
      '/notifications'
    )
    assert.equal(await settings.get('notify.time_zone'), 'Europe/Berlin')
    assert.equal(await settings.get('notify.max_attempts'), 6)
    assert.equal(await countRows('audit_log', { action: 'setting.set' }), 2)
    assert.include(
      pageText((await agent.get('/notifications')).text),
      'Saved delivery settings: 2 settings changed.'
    )

    await agent.submit(
      '/notifications/settings',
      {
        notify__time_zone: 'Mars/Olympus',
        notify__max_attempts: '3',
      },
      '/notifications'
    )
    assert.equal(await settings.get('notify.time_zone'), 'Europe/Berlin')
    assert.equal(await settings.get('notify.max_attempts'), 6)
    const page = pageText((await agent.get('/notifications')).text)
    assert.include(page, 'Nothing was saved in delivery settings')
    assert.include(page, 'Time zone must be a time zone name such as UTC')
    assert.equal(await countRows('audit_log', { action: 'setting.set' }), 2)
  })

  test('"Send a test" queues notifications.test for that channel only, forced, audited', async ({
    assert,
  }) => {
    const { agent, user } = await signedIn()
    await settings.setMany({
      'notify.webhook.url': 'https://hooks.example/notify',
      'notify.webhook.secret': 'a-shared-secret-1234',
    })
    const sent = await agent.submit('/notifications/webhook/test', {}, '/notifications')
    assert.equal(sent.status, 302)
    const events = await db.from('notification_events').where('name', 'notifications.test')
    assert.lengthOf(events, 1)
    assert.equal(events[0].name, 'notifications.test')
    assert.equal(events[0].only_channel, 'webhook')
    assert.isNull(events[0].only_target)
    assert.isTrue(Boolean(events[0].forced))
    assert.deepEqual(JSON.parse(events[0].data), { by: user.email })
    const [audit] = await db.from('audit_log').where('action', 'notification.test')
    assert.include(audit, {
      subject_type: 'notification_channel',
      subject_id: 'webhook',
      actor: user.email,
    })
    const page = pageText((await agent.follow(sent.location!)).text)
    assert.include(page, `A test message was queued for webhook (event #${events[0].id})`)
    assert.include(page, 'Last deliveries')
  })

  test('"Send a test" to a channel that cannot send yet queues nothing and says why', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    await agent.submit('/notifications/webhook/test', {}, '/notifications')
    assert.equal(await countRows('notification_events', { name: 'notifications.test' }), 0)
    assert.equal(await countRows('audit_log', { action: 'notification.test' }), 0)
    assert.include(
      pageText((await agent.get('/notifications')).text),
      'No test was queued: the webhook channel cannot send yet (notify.webhook.url is empty).'
    )
    const unknown = await agent.submit('/notifications/pigeon/test', {}, '/notifications')
    assert.equal(unknown.status, 404)
  })

  test('a stopped target is listed and "Resume" deletes it, audited', async ({ assert }) => {
    const { agent, user } = await signedIn()
    await db.table('notification_targets').insert([
      {
        channel: 'webhook',
        target: 'https://hooks.example/x?token=abcdef123456',
        reason: 'HTTP 410: gone',
        stopped_at: Date.now(),
      },
      {
        channel: 'email',
        target: 'ops@example.com',
        reason: '550 no such user',
        stopped_at: Date.now(),
      },
    ])
    const page = await agent.get('/notifications')
    const text = pageText(page.text)
    assert.include(text, 'Stopped targets of webhook')
    assert.include(text, 'https://hooks.example/x?***')
    assert.notInclude(page.text, 'abcdef123456')
    assert.include(text, '550 no such user')
    const row = await db.from('notification_targets').where('channel', 'webhook').firstOrFail()
    const resumed = await agent.post(`/notifications/targets/${row.id}/resume`)
    assert.equal(resumed.status, 302)
    assert.deepEqual(
      (await db.from('notification_targets').select('channel')).map((r) => r.channel),
      ['email']
    )
    const [audit] = await db.from('audit_log').where('action', 'notification.target_resumed')
    assert.include(audit, {
      subject_type: 'notification_channel',
      subject_id: 'webhook',
      actor: user.email,
    })
    assert.notInclude(audit.before, 'abcdef123456')
    assert.include(
      pageText((await agent.get('/notifications')).text),
      'Resumed https://hooks.example/x?*** on webhook'
    )

    // Twice: nothing to resume, said plainly.
    await agent.post(`/notifications/targets/${row.id}/resume`)
    assert.include(
      pageText((await agent.get('/notifications')).text),
      'That target is not stopped (any more)'
    )
    assert.equal(await countRows('audit_log', { action: 'notification.target_resumed' }), 1)
  })

  test('a viewer sees the page but every change is refused with 403, nothing written', async ({
    assert,
  }) => {
    const { agent } = await signedIn('viewer')
    await settings.setMany({
      'notify.webhook.url': 'https://hooks.example/notify',
      'notify.webhook.secret': 'a-shared-secret-1234',
    })
    await db.table('notification_targets').insert({
      channel: 'webhook',
      target: 'https://hooks.example/notify',
      reason: 'HTTP 410',
      stopped_at: Date.now(),
    })
    const target = await db.from('notification_targets').firstOrFail()
    await emptyAuditLog()
    const page = await agent.get('/notifications')
    assert.equal(page.status, 200)
    const attempts = [
      () => agent.post('/notifications/webhook/settings', { notify__webhook__enabled: 'true' }),
      () => agent.post('/notifications/settings', { notify__max_attempts: '3' }),
      () => agent.post('/notifications/webhook/test'),
      () => agent.post(`/notifications/targets/${target.id}/resume`),
    ]
    for (const attempt of attempts) assert.equal((await attempt()).status, 403)
    assert.isFalse(await settings.read('notify.webhook.enabled'))
    assert.equal(await settings.get('notify.max_attempts'), 12)
    assert.equal(await countRows('notification_events', { name: 'notifications.test' }), 0)
    assert.equal(await countRows('notification_targets'), 1)
    assert.equal(await countRows('audit_log'), 0)
  })

  test('the channels’ settings live here only: not on Settings, and no field for the state Telegram keeps', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    const page = await agent.get('/notifications')
    assert.equal(page.status, 200)
    assert.include(
      page.text,
      'data-setting="notify.telegram.api_url"',
      'the telegram form is there'
    )
    assert.notInclude(page.text, 'update_offset', 'the getUpdates offset is no field')
    const other = await agent.get('/settings/plugins')
    assert.notInclude(other.text, 'notify.', 'no notify.* setting on the Settings pages')

    // A test sent from here is labelled in the audit log and leads back to this page.
    await settings.setMany({
      'notify.webhook.url': 'https://ops.example/hook',
      'notify.webhook.secret': 'a-secret',
    })
    await agent.submit('/notifications/webhook/test', {}, '/notifications')
    const audit = await agent.get('/audit')
    assert.include(pageText(audit.text), 'Test notification sent')
    assert.include(audit.text, 'href="/admin/notifications"')
  })
})
