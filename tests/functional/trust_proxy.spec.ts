import { test } from '@japa/runner'
import { randomBytes } from 'node:crypto'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { startServerProcess, type RunningServer } from '#tests/helpers/processes'

/**
 * The client address a server process worked out for a request carrying
 * `forwardedFor`, read from its access-log line.
 */
async function clientIpSeen(server: RunningServer, forwardedFor: string): Promise<string> {
  const path = `/pay/check-status/${randomBytes(8).toString('hex')}`
  await (
    await fetch(`${server.url}${path}`, { headers: { 'x-forwarded-for': forwardedFor } })
  ).arrayBuffer()
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const line = server
      .output()
      .split('\n')
      .slice(0, -1) // whole lines only: the text after the last newline may still be coming
      .find((entry) => entry.includes(path))
    if (line) return JSON.parse(line).ip
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no access-log line for ${path}:\n${server.output()}`)
}

test.group('TRUST_PROXY', (group) => {
  group.each.setup(() => resetDatabase())

  test('by default X-Forwarded-For is believed from a proxy on loopback only', async ({
    client,
    assert,
  }) => {
    // The test client connects from 127.0.0.1; each client address has a budget of one.
    await settings.set('rate_limit.cashier_per_minute', '1')
    const from = (forwardedFor: string) =>
      client.get('/pay/check-status/AAAAAAAAAAAAAAAAAAAAAA').header('x-forwarded-for', forwardedFor)
    assert.equal((await from('198.51.100.1')).status(), 400)
    assert.equal((await from('198.51.100.2')).status(), 400)
    assert.equal((await from('198.51.100.1')).status(), 429)
    // 10.1.2.3 is not a trusted proxy: it is the client, whatever it claims before it.
    assert.equal((await from('203.0.113.9, 10.1.2.3')).status(), 400)
    assert.equal((await from('203.0.113.10, 10.1.2.3')).status(), 429)
  })

  test('none, a CIDR list and true, in server processes', async ({ assert, cleanup }) => {
    const variants = { none: 'none', list: '127.0.0.1/32, 10.0.0.0/8', all: 'true' }
    // One after the other: processes starting together take turns migrating anyway.
    const servers: Record<string, RunningServer> = {}
    for (const [name, value] of Object.entries(variants)) {
      servers[name] = await startServerProcess({ LOG_LEVEL: 'info', TRUST_PROXY: value })
      cleanup(() => servers[name].stop())
    }
    const chain = '203.0.113.9, 10.1.2.3'

    // none: the socket's peer is the client, whatever the header says.
    assert.equal(await clientIpSeen(servers.none, '203.0.113.9'), '127.0.0.1')
    // A list: hops inside it are skipped from the right.
    assert.equal(await clientIpSeen(servers.list, chain), '203.0.113.9')
    assert.equal(await clientIpSeen(servers.list, '192.0.2.1, 172.16.0.1, 10.1.2.3'), '172.16.0.1')
    // true: every hop is trusted, the left-most address counts.
    assert.equal(await clientIpSeen(servers.all, `198.51.100.7, ${chain}`), '198.51.100.7')
  }).timeout(90_000)

  test('an invalid value stops the start with a message naming it', async ({ assert }) => {
    for (const value of ['10.0.0.0/33', 'proxies']) {
      const error = await startServerProcess({ TRUST_PROXY: value }).then(
        async (server) => {
          await server.stop()
          return null
        },
        (caught: Error) => caught
      )
      assert.isNotNull(error, value)
      assert.include(error!.message, 'server exited early')
      assert.include(error!.message, `TRUST_PROXY: "${value}" is not an IP address or CIDR range`)
    }
  }).timeout(60_000)
})
