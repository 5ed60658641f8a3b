import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { createAdminUser, currentTotp } from '#tests/helpers/admin'
import { seedOrderRow } from '#tests/helpers/order_rows'
import {
  DESKTOP,
  NARROW_PHONE,
  PHONE,
  checkAdminPage,
  browserGroup,
  adminSignIn,
  newPage,
  screenshot,
} from '#tests/helpers/browser'
import { fillDashboard, forgetDashboard } from '#tests/helpers/chain_rows'

const DESKTOP_AND_PHONE = [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const

test.group('Console dashboard and audit log in Chromium', (group) => {
  browserGroup(group, forgetDashboard)

  test('empty installation: the dashboard guides the first steps', async ({ assert }) => {
    const viewer = await createAdminUser({ role: 'viewer' })
    const { context, page } = await newPage(DESKTOP)
    try {
      await adminSignIn(page, viewer)
      await page.getByRole('heading', { name: 'No orders yet' }).waitFor()
      await checkAdminPage(page, assert, 'dashboard-empty', DESKTOP_AND_PHONE)
    } finally {
      await context.close()
    }
  })

  test('with orders: figures, the chart as a named image with its data, scanners, recent orders; dark mode too', async ({
    assert,
  }) => {
    await fillDashboard(Date.now(), (day) => (day % 5) + 1)
    const admin = await createAdminUser()
    for (const colorScheme of ['light', 'dark'] as const) {
      const { context, page } = await newPage(DESKTOP, { colorScheme })
      try {
        await adminSignIn(page, admin)
        const chart = page.getByRole('img', { name: /Orders created and paid per day/ })
        assert.equal(await chart.count(), 1)
        await page.getByText('Show the figures').click()
        assert.equal(
          await page
            .getByRole('table', { name: /Orders created and paid per day/ })
            .getByRole('row')
            .count(),
          15
        )
        const recent = page.getByRole('region', { name: 'Ten newest orders' })
        await recent.getByRole('link').first().waitFor()
        assert.match(
          (await recent.getByRole('link').first().getAttribute('href'))!,
          /^\/admin\/orders\/T\d{12}$/
        )
        await checkAdminPage(page, assert, `dashboard-${colorScheme}`, DESKTOP_AND_PHONE)
      } finally {
        await context.close()
      }
    }
  })

  test('health checks: an admin sees the problems and warnings with their fixes, then "Nothing to fix"', async ({
    assert,
  }) => {
    const orderId = await seedOrderRow({ status: 2, createdAt: Date.now() - 60_000 })
    await db.table('callbacks').insert({
      order_id: orderId,
      format: 'native',
      status: 'failed',
      attempts: 8,
      next_attempt_at: Date.now(),
      last_http_status: 500,
      last_error: 'HTTP 500',
      created_at: Date.now(),
      updated_at: Date.now(),
    })
    const admin = await createAdminUser()
    const sizes = [
      ['320', NARROW_PHONE],
      ['desktop', DESKTOP],
    ] as const
    const first = await newPage(DESKTOP)
    try {
      await adminSignIn(first.page, admin)
      const card = first.page.getByRole('region', { name: 'Health checks' })
      const items = card.getByRole('list', { name: 'Warnings and problems' }).getByRole('listitem')
      await items.first().waitFor()
      const worst = await items.first().innerText()
      assert.include(worst, 'Problem')
      assert.include(worst, '1 callback given up in the last 24 h (most answered HTTP 500)')
      assert.include(worst, 'callbacks:redeliver')
      assert.isAbove(await items.count(), 1, 'the warnings follow')
      await checkAdminPage(first.page, assert, 'dashboard-health', sizes)
    } finally {
      await first.context.close()
    }

    // Everything fixed: no failed callback, no chain half set up, an admin with 2FA.
    await db.from('callbacks').delete()
    await db.from('chains').update({ enabled: false })
    await db.from('users').delete()
    const secure = await createAdminUser({ totp: true })
    const second = await newPage(DESKTOP)
    try {
      await adminSignIn(second.page, secure, () => currentTotp(secure.totpSecret!))
      const card = second.page.getByRole('region', { name: 'Health checks' })
      await card.getByText('Nothing to fix').waitFor()
      assert.equal(await card.getByRole('listitem').count(), 0)
      await checkAdminPage(second.page, assert, 'dashboard-health-ok', sizes)
    } finally {
      await second.context.close()
    }
  })

  test('audit log: a sign-in and a change listed, filtered from the form, no serious axe violation', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    await db.table('audit_log').insert({
      created_at: Date.now() - 60_000,
      actor_kind: 'ace',
      actor: 'ace:deploy',
      action: 'chain.update',
      subject_type: 'chain',
      subject_id: 'ethereum',
      before: JSON.stringify({ enabled: true, confirmations: 12, rpcUrls: ['https://a.example'] }),
      after: JSON.stringify({
        enabled: false,
        confirmations: 20,
        rpcUrls: ['https://b.example/v3/***'],
      }),
      ip: null,
      request_id: null,
    })
    const { context, page } = await newPage(DESKTOP)
    try {
      await adminSignIn(page, admin)
      await page.getByRole('link', { name: 'Audit log' }).click()
      await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor()
      const table = page.getByRole('region', { name: 'Audit log entries' })
      assert.include(await table.innerText(), 'Signed in')
      assert.include(await table.innerText(), 'Chain changed')
      await checkAdminPage(page, assert, 'audit', DESKTOP_AND_PHONE)

      await page.setViewportSize(DESKTOP)
      await page.getByLabel('Action').selectOption('chain.*')
      await page.getByRole('button', { name: 'Filter' }).click()
      await page.waitForURL(/action=chain\.\*/)
      const filtered = page.getByRole('region', { name: 'Audit log entries matching the filters' })
      const text = await filtered.innerText()
      assert.include(text, 'Chain changed')
      assert.notInclude(text, 'Signed in')
      assert.equal(await page.getByLabel('Action').inputValue(), 'chain.*')
      await screenshot(page, 'console-audit-filtered-desktop')
    } finally {
      await context.close()
    }
  })
})
