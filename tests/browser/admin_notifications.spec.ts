import { test } from '@japa/runner'
import { notificationDelivery } from '#tests/helpers/notification_rows'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { createAdminUser } from '#tests/helpers/admin'
import { adminUrl } from '#admin/admin_paths'
import {
  DESKTOP,
  NARROW_PHONE,
  checkAdminPage,
  browserGroup,
  adminSignIn,
  newPage,
  screenshot,
} from '#tests/helpers/browser'

test.group('Console in a browser: notifications', (group) => {
  browserGroup(group)

  test('the page renders empty and filled on every width, accessible; a test is sent from it', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const { context, page } = await newPage(DESKTOP)
    const errors: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    await adminSignIn(page, admin)
    await page.goto(adminUrl('/notifications'))
    assert.isTrue(await page.getByRole('heading', { name: 'Notifications', level: 1 }).isVisible())
    assert.isTrue(await page.getByText('No notification sent yet').isVisible())
    await checkAdminPage(page, assert, 'notifications-empty')

    // A long page on a phone: each section one tap away, landing below the sticky top bar.
    await page.setViewportSize(NARROW_PHONE)
    const jump = page.getByRole('navigation', { name: 'On this page' })
    await jump.getByRole('link', { name: /Channel: webhook/ }).click()
    await page.waitForURL(/#channel-webhook$/)
    const landed = `(() => {
      const top = document.getElementById('channel-webhook-title').getBoundingClientRect().top
      const bar = document.querySelector('.c-top').getBoundingClientRect().bottom
      return top >= bar && top < window.innerHeight / 2
    })()`
    const deadline = Date.now() + 5000
    while (!(await page.evaluate(landed)) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50))
    assert.isTrue(await page.evaluate(landed), 'the webhook card is at the top, below the bar')

    // Set the webhook up from its form, as an admin would.
    const form = page.locator('#channel-webhook')
    await form.getByLabel('Send notifications').selectOption('true')
    await form.getByLabel('URL', { exact: true }).fill('https://hooks.example/notify?token=abc')
    await form.getByLabel('Secret', { exact: true }).fill('a-shared-secret-1234')
    await form.getByRole('button', { name: 'Save webhook' }).click()
    assert.include(await page.locator('.flash').first().textContent(), 'Saved the webhook channel')
    assert.isTrue(await settings.read('notify.webhook.enabled'))

    // A refused value is named at its field.
    await page.locator('#channel-webhook').getByLabel('Quiet hours').fill('25:00-26:00')
    await page.locator('#channel-webhook').getByRole('button', { name: 'Save webhook' }).click()
    assert.include(await page.locator('.flash').first().textContent(), 'Nothing was saved')
    assert.include(
      await page.locator('#channel-webhook .field-error').first().textContent(),
      'Quiet hours must be HH:MM-HH:MM'
    )
    await screenshot(page, 'console-notifications-refused-320')

    await page
      .locator('#channel-webhook')
      .getByRole('button', { name: 'Send a test through webhook' })
      .click()
    assert.include(
      await page.locator('.flash').first().textContent(),
      'A test message was queued for webhook'
    )
    const [event] = await db.from('notification_events').where('name', 'notifications.test')
    assert.equal(event.only_channel, 'webhook')

    // Filled: deliveries of every outcome (each of its own event) and a stopped target.
    const now = Date.now()
    for (const [status, channel, target, error] of [
      ['delivered', 'email', 'ops@example.com', ''],
      [
        'failed',
        'webhook',
        'https://hooks.example/a-very-long-path/that-keeps-going/and-going?token=abc',
        'HTTP 404: the receiver answered with a long page that says no such hook exists here',
      ],
      [
        'pending',
        'email',
        'alerts-with-a-long-address@operations.example.com',
        'connect ECONNREFUSED 10.0.0.1:25',
      ],
      ['folded', 'email', 'ops@example.com', ''],
    ] as const) {
      await notificationDelivery({
        channel,
        target,
        status,
        event: status === 'failed' ? 'callback.gave_up' : 'order.paid',
        severity: status === 'failed' ? 'critical' : 'info',
        attempts: status === 'failed' ? 12 : 1,
        at: now,
        nextAttemptAt: now + 60_000,
        lastError: error,
      })
    }
    await db.table('notification_targets').insert({
      channel: 'webhook',
      target: 'https://hooks.example/notify?token=abc',
      reason: 'HTTP 410: gone',
      stopped_at: now,
    })
    await page.goto(adminUrl('/notifications'))
    // Targets are shown without their query string (the URL setting itself is not a secret: its field shows it).
    assert.notInclude(await page.locator('#deliveries').textContent(), 'token=abc')
    assert.notInclude(await page.locator('#channel-webhook table').textContent(), 'token=abc')
    await checkAdminPage(page, assert, 'notifications-filled')
    await page.getByRole('button', { name: 'Resume https://hooks.example/notify?***' }).click()
    assert.include(await page.locator('.flash').first().textContent(), 'Resumed')
    assert.equal(Number((await db.from('notification_targets').count('* as n'))[0].n), 0)
    assert.deepEqual(errors, [], `no CSP violation nor script error: ${errors.join(' | ')}`)

    // In Chinese (the admin's choice): the same page, filled, at 320 px and on a desktop.
    admin.user.locale = 'zh-CN'
    await admin.user.save()
    await page.goto(adminUrl('/notifications'))
    assert.isTrue(await page.getByRole('heading', { name: '通知', level: 1 }).isVisible())
    assert.isTrue(await page.getByRole('heading', { name: '最近投递' }).isVisible())
    await checkAdminPage(page, assert, 'notifications-zh', [
      ['320', NARROW_PHONE],
      ['desktop', DESKTOP],
    ])
    await context.close()
  }).timeout(180_000)
})
