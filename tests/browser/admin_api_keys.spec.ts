import { test } from '@japa/runner'
import ApiKey from '#models/api_key'
import settings from '#settings/settings_service'
import { createAdminUser } from '#tests/helpers/admin'
import { merchantForGroup } from '#tests/helpers/merchant_group'
import { makeTronPayable } from '#tests/helpers/setup'
import {
  DESKTOP,
  PHONE,
  checkAdminPage,
  closeBrowser,
  adminSignIn,
  newPage,
} from '#tests/helpers/browser'

test.group('Console API keys in a browser', (group) => {
  const merchant = merchantForGroup(group, { lifecycle: false })
  group.teardown(() => closeBrowser())

  test('create a key, copy its secret, read the integration page, send a test callback', async ({
    assert,
  }) => {
    await makeTronPayable()
    await settings.set('callbacks.allow_private_targets', 'true')
    const admin = await createAdminUser({ role: 'admin' })
    const { context, page } = await newPage(DESKTOP)
    try {
      await adminSignIn(page, admin)
      await page.goto('/admin/api-keys')
      await checkAdminPage(page, assert, 'api-keys-list')

      await page.getByRole('link', { name: 'Create a key' }).click()
      await page.getByLabel('Note').fill('Main shop')
      await page.getByLabel('Allowed IPs').fill('203.0.113.7\n198.51.100.0/24')
      await checkAdminPage(page, assert, 'api-keys-create')
      await page.getByRole('button', { name: 'Create key' }).click()

      await page.getByRole('heading', { name: 'API key 1001 created' }).waitFor()
      const secret = (await ApiKey.findByOrFail('pid', '1001')).signingSecret()
      assert.equal((await page.locator('#key-secret').textContent())!.trim(), secret)
      await checkAdminPage(page, assert, 'api-keys-secret')
      await page.getByRole('button', { name: 'Copy the secret' }).click()
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret)

      await page.getByRole('link', { name: 'I have saved it' }).click()
      await page.getByRole('heading', { name: 'API key 1001' }).waitFor()
      assert.notInclude(await page.content(), secret)
      await checkAdminPage(page, assert, 'api-keys-show')

      await page.getByRole('link', { name: 'Integration' }).first().click()
      await page.getByRole('heading', { name: 'Integration of pid 1001' }).waitFor()
      assert.notInclude(await page.content(), secret)
      await checkAdminPage(page, assert, 'api-keys-integration')
      // Examples but the first are folded; the copy button copies the example as shown.
      assert.isFalse(await page.getByRole('button', { name: 'Copy Node.js example' }).isVisible())
      await page.locator('#create-order summary', { hasText: 'Node.js' }).click()
      await page.getByRole('button', { name: 'Copy Node.js example' }).click()
      const copied = String(await page.evaluate('navigator.clipboard.readText()'))
      assert.include(copied, "createHmac('sha256', secret)")
      assert.include(copied, 'pid: "1001"')

      await page.getByLabel('Callback URL').fill(merchant.notifyUrl)
      await page.getByRole('button', { name: 'Send test callback' }).click()
      await page.getByRole('heading', { name: "The shop's answer" }).waitFor()
      assert.include(await page.locator('.keys-result').textContent(), 'Acknowledged')
      assert.lengthOf(merchant.requests, 1)
      await checkAdminPage(page, assert, 'api-keys-test-callback')
    } finally {
      await context.close()
    }
  })

  test('disable and rotate go through a confirmation', async ({ assert }) => {
    const admin = await createAdminUser({ role: 'admin' })
    const { context, page } = await newPage(PHONE)
    try {
      await adminSignIn(page, admin)
      await page.goto('/admin/api-keys/1000')
      await page.getByText('Disable', { exact: true }).click()
      await page.getByRole('button', { name: 'Disable the key' }).click()
      await page.getByText('pid 1000 is disabled').waitFor()
      assert.equal((await ApiKey.findByOrFail('pid', '1000')).status, 'disabled')

      await page.getByText('Rotate the secret', { exact: true }).click()
      await page.getByRole('button', { name: 'Rotate now' }).click()
      await page.getByRole('heading', { name: 'New secret of pid 1000' }).waitFor()
      const secret = (await ApiKey.findByOrFail('pid', '1000')).signingSecret()
      assert.equal((await page.locator('#key-secret').textContent())!.trim(), secret)
    } finally {
      await context.close()
    }
  })
})
