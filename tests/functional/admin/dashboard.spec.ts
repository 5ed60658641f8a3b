import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { DAY, resetOrderRows, seedOrderRow, seededTradeId } from '#tests/helpers/order_rows'
import { CLOSED_URL } from '#tests/helpers/processes'
import { bscFarBehind, freshDashboard, insertCursor, watchChain } from '#tests/helpers/chain_rows'
import doctor from '#services/doctor/doctor'

/** The text of the first table whose caption is `caption`. */
function tableText(html: string, caption: string) {
  const start = html.indexOf(`>${caption}</caption>`)
  if (start === -1) throw new Error(`no table captioned "${caption}"`)
  return pageText(html.slice(start, html.indexOf('</table>', start)))
}

test.group('Console dashboard', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    resetOrderRows()
  })

  test('signed out, the home page sends to the sign-in', async ({ assert }) => {
    const response = await new AdminAgent().get('/')
    assert.equal(response.status, 302)
    assert.equal(response.location, '/admin/login')
  })

  test('a new installation: a viewer sees the first steps, zeros, the scanners, and no recent order', async ({
    assert,
  }) => {
    const viewer = await createAdminUser({ role: 'viewer' })
    const agent = await AdminAgent.signIn(viewer)
    const page = await agent.get('/')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.include(text, 'No orders yet')
    assert.include(text, 'Create an API key')
    assert.include(page.text, 'href="/admin/api-keys"')
    assert.include(page.text, 'href="/admin/wallets"')
    assert.include(text, 'Orders today 0')
    assert.include(text, 'Conversion, 7 days — No order in 7 days')
    assert.include(text, 'Nothing paid in the last 30 days')
    assert.include(text, 'Orders appear here as soon as a shop creates them')
    // The seeded chains have no wallet yet: each says what it needs.
    assert.include(
      tableText(page.text, 'Scanner status per chain'),
      'Nothing to watch Add a receiving wallet to watch this chain.'
    )
    assert.match(page.text, /<svg [^>]*role="img"[^>]*aria-labelledby="orders-per-day-title"/)
    assert.include(page.text, 'Created: none. Paid: none.')
  })

  test('figures: orders by period, conversion, exact volumes, callbacks, unmatched, recent orders linking to their page', async ({
    assert,
  }) => {
    const now = Date.now()
    await seedOrderRow({ status: 2, createdAt: now - 2000, actualAmount: '10.5', amount: '76.13' })
    await seedOrderRow({
      status: 2,
      createdAt: now - 1000,
      network: 'ethereum',
      actualAmount: '0.29',
      amount: '2.1',
    })
    await seedOrderRow({ status: 1, createdAt: now - 500 })
    await seedOrderRow({ status: 2, createdAt: now - 3 * DAY, actualAmount: '1.1' })
    await seedOrderRow({ status: 2, createdAt: now - 3 * DAY, actualAmount: '2.2' })
    await seedOrderRow({ status: 3, createdAt: now - 3 * DAY })
    await seedOrderRow({ status: 2, createdAt: now - 10 * DAY, actualAmount: '1000000.123' })
    await db.table('unmatched_payments').insert({
      network: 'tron',
      reference: 'ref-1',
      to_address: 'TWallet',
      token: 'USDT',
      amount: '3',
      transfer_time: now - 60_000,
      reason: 'no order waits for this amount',
      detected_at: now - 60_000,
    })

    const admin = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    const page = await agent.get('/')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.notInclude(text, 'No orders yet')
    assert.include(text, 'Orders today 3 2 paid · 1 waiting')
    assert.include(text, 'Conversion, 7 days 66.7 % 4 of 6 orders paid')
    assert.include(text, 'Unmatched payments 1 Newest 1 min ago')
    assert.include(page.text, 'href="/admin/unmatched"')

    assert.include(tableText(page.text, 'Orders by status, today, 7 and 30 days'), 'Created 3 6 7')
    assert.include(
      tableText(page.text, 'Orders by status, today, 7 and 30 days'),
      'Conversion (paid ÷ created) 66.7 % 66.7 % 71.4 %'
    )
    // 10.5 + 0.29 today; + 1.1 + 2.2 (not 3.3000000000000003) in 7 days; + 1,000,000.123 in 30.
    assert.include(tableText(page.text, 'Paid volume per token'), 'USDT 10.79 14.09 1,000,014.213')
    const perNetwork = tableText(page.text, 'Paid volume per network')
    assert.include(perNetwork, 'Ethereum USDT 0.29 0.29 0.29')
    assert.include(perNetwork, 'TRON USDT 10.5 13.8 1,000,013.923')

    const recent = tableText(page.text, 'Ten newest orders')
    assert.include(recent, `${seededTradeId(3)} 1000 · O3 100 CNY 13.8 USDT TRON Waiting`)
    assert.include(page.text, `href="/admin/orders/${seededTradeId(3)}"`)
    assert.isBelow(
      recent.indexOf(seededTradeId(3)),
      recent.indexOf(seededTradeId(1)),
      'newest first'
    )
    assert.include(page.text, 'Created: 7 in total')
  })

  test('scanner status: a failing chain shows its error, a chain far behind its lag highlighted', async ({
    assert,
  }) => {
    const now = Date.now()
    await watchChain('ethereum', now)
    await insertCursor('ethereum', now, {
      last_scan_at: now - 5000,
      last_error: 'every RPC endpoint failed; last: HTTP 503 <Service Unavailable>',
    })
    await bscFarBehind(now)
    const agent = await AdminAgent.signIn(await createAdminUser({ role: 'viewer' }))
    const page = await agent.get('/')
    const scanners = tableText(page.text, 'Scanner status per chain')
    assert.include(scanners, 'Error')
    assert.include(scanners, 'every RPC endpoint failed; last: HTTP 503 <Service Unavailable>')
    assert.notInclude(page.text, '<Service Unavailable>', 'the error is escaped')
    assert.include(scanners, 'Behind Far behind the head. 50,000,000 head 50,000,100')
    assert.include(scanners, '100 blocks (≈ 5 min) waits for 15 confirmations')
    assert.match(page.text, /<strong class="dash-lag-large">100 blocks \(≈ 5 min\)<\/strong>/)
    assert.include(pageText(page.text), '2 scanners need attention')
    assert.include(page.text, '<a href="/admin/chains/bsc">BNB Smart Chain</a>')
  })
})

test.group('Console dashboard: health checks', (group) => {
  group.each.setup(() => freshDashboard())
  group.each.timeout(60_000)

  /** The text of the "Health checks" card; '' when the page has none. */
  function healthText(html: string) {
    const start = html.indexOf('id="health-checks"')
    if (start === -1) return ''
    return pageText(
      html.slice(html.lastIndexOf('<section', start), html.indexOf('</section>', start))
    )
  }

  test('an admin sees the warnings and problems with their fixes; a viewer does not see the card', async ({
    assert,
  }) => {
    const viewer = await createAdminUser({ role: 'viewer' })
    const viewerPage = await (await AdminAgent.signIn(viewer)).get('/')
    assert.equal(viewerPage.status, 200)
    assert.equal(healthText(viewerPage.text), '')

    const orderId = await seedOrderRow({ status: 2, createdAt: Date.now() - 60_000 })
    await db.table('callbacks').insert({
      order_id: orderId,
      format: 'native',
      status: 'failed',
      attempts: 8,
      next_attempt_at: Date.now(),
      last_error: 'HTTP 500',
      created_at: Date.now(),
      updated_at: Date.now(),
    })
    const admin = await createAdminUser()
    const page = await (await AdminAgent.signIn(admin)).get('/')
    assert.equal(page.status, 200)
    const text = healthText(page.text)
    assert.include(text, 'Health checks')
    assert.match(text, /1 problem, \d+ warnings\./)
    // Worst first, each with its fix.
    assert.match(
      text,
      /^Health checks .*? Problem Merchant callbacks 1 callback given up in the last 24 h/
    )
    assert.include(
      text,
      'Fix: Fix the merchant’s notify URL or server, then node ace callbacks:redeliver'
    )
    assert.match(
      text,
      /Warning Chains: wallets and tokens \d+ chains are enabled without a receiving wallet \(.*tron/
    )
    assert.include(text, 'Fix: node ace wallet:add <network> <address>')
    assert.notInclude(text, 'Nothing to fix')
    assert.notInclude(text, 'Every migration of this release is applied', 'ok lines are not listed')
  })

  test('all well: "Nothing to fix"; the live checks answer from the next load on, cached for a minute', async ({
    assert,
  }) => {
    await db.from('chains').update({ enabled: false })
    await db.from('users').delete()
    const admin = await createAdminUser({ totp: true })
    const agent = await AdminAgent.signIn(admin)
    const first = healthText((await agent.get('/')).text)
    assert.include(first, 'Nothing to fix')
    assert.include(first, 'are being checked now: reload in a moment')

    await doctor.liveSettled()
    const second = healthText((await agent.get('/')).text)
    assert.include(second, 'Nothing to fix')
    assert.include(second, 'RPC endpoints, clock and exchange rates checked just now')
  })

  test('an endpoint that refuses connections: a problem on the dashboard once the live checks have answered', async ({
    assert,
  }) => {
    const now = Date.now()
    await db.from('chains').whereNot('network', 'tron').update({ enabled: false })
    await watchChain('tron', now, {
      address: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
      chain: { rpc_urls: JSON.stringify([CLOSED_URL]) },
    })
    const agent = await AdminAgent.signIn(await createAdminUser())
    assert.notInclude(healthText((await agent.get('/')).text), 'did not answer')
    await doctor.liveSettled()
    const text = healthText((await agent.get('/')).text)
    assert.include(
      text,
      `Problem RPC endpoints tron: ${CLOSED_URL} did not answer: connection refused`
    )
    assert.include(text, 'Fix: Check the node or provider')
  })
})
