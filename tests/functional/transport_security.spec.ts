import { test } from '@japa/runner'
import { adminUrl } from '#admin/admin_paths'
import { resetDatabase } from '#tests/helpers/database'
import { startServerProcess } from '#tests/helpers/processes'

const HSTS = 'max-age=15552000'

/** One of each kind of answer: probe, merchant API, cashier error, static file, console page. */
const PATHS = [
  '/health/live',
  '/payments/native/v1/config',
  '/pay/check-status/unknown-trade-id',
  '/assets/cashier.css',
  '/no/such/page',
]

async function sessionCookie(base: string, headers: Record<string, string> = {}) {
  const page = await fetch(`${base}${adminUrl('/login')}`, { headers })
  return page.headers.getSetCookie().find((line) => line.startsWith('gateway_console='))!
}

test.group('HSTS and Secure cookies when served over HTTPS', (group) => {
  group.each.setup(() => resetDatabase())

  test('behind a trusted proxy saying https: HSTS on every answer, the session cookie Secure', async ({
    assert,
  }) => {
    const base = process.env.APP_URL!
    const https = { 'x-forwarded-proto': 'https' }
    for (const path of PATHS) {
      const response = await fetch(`${base}${path}`, { headers: https })
      await response.arrayBuffer()
      assert.equal(response.headers.get('strict-transport-security'), HSTS, path)
    }
    const login = await fetch(`${base}${adminUrl('/login')}`, { headers: https })
    assert.equal(login.headers.get('strict-transport-security'), HSTS)
    assert.match(await sessionCookie(base, https), /;\s*Secure/i)
  })

  test('over plain http (APP_URL http, no proxy saying https): no HSTS, no Secure flag', async ({
    assert,
  }) => {
    const base = process.env.APP_URL!
    for (const path of [...PATHS, adminUrl('/login')]) {
      const response = await fetch(`${base}${path}`, { headers: { 'x-forwarded-proto': 'http' } })
      await response.arrayBuffer()
      assert.isNull(response.headers.get('strict-transport-security'), path)
    }
    assert.notMatch(await sessionCookie(base), /Secure/i)
  })

  test('APP_URL https: HSTS everywhere; an untrusted peer cannot claim https', async ({
    assert,
  }) => {
    const secure = await startServerProcess({ APP_URL: 'https://pay.example.com' })
    try {
      for (const path of PATHS) {
        const response = await fetch(`${secure.url}${path}`)
        await response.arrayBuffer()
        assert.equal(response.headers.get('strict-transport-security'), HSTS, path)
      }
      assert.match(await sessionCookie(secure.url), /;\s*Secure/i)
    } finally {
      await secure.stop()
    }

    const untrusting = await startServerProcess({ TRUST_PROXY: 'none' })
    try {
      const response = await fetch(`${untrusting.url}/health/live`, {
        headers: { 'x-forwarded-proto': 'https' },
      })
      await response.arrayBuffer()
      assert.isNull(response.headers.get('strict-transport-security'))
      assert.notMatch(
        await sessionCookie(untrusting.url, { 'x-forwarded-proto': 'https' }),
        /Secure/i
      )
    } finally {
      await untrusting.stop()
    }
  })
})
