import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import configCache from '#services/config_cache'
import { countRows, emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { insertCurrentRate, insertPaidOrders, insertRateAnswer } from '#tests/helpers/rate_rows'

async function signedIn(role: 'admin' | 'viewer' = 'admin') {
  const user = await createAdminUser({ role })
  return { user, agent: await AdminAgent.signIn(user) }
}

/** A pair as the workers leave it: its current rate and each source's last answer. */
async function livePair(
  fields: Omit<Parameters<typeof insertCurrentRate>[0], 'computedAt'> & {
    answers?: { source: string; price: string | null; quote?: string; error?: string }[]
  }
) {
  const now = Date.now()
  const { answers, ...pair } = fields
  await insertCurrentRate({ ...pair, computedAt: now - 30_000 })
  for (const answer of answers ?? [])
    await insertRateAnswer({
      ...answer,
      token: pair.token,
      fiat: pair.fiat,
      fetchedAt: now - 90_000,
    })
}

/** A chart's svg on the page, by its id ("rate-USDT_CNY"). */
function chartSvg(html: string, id: string): string {
  const match = html.match(new RegExp(`<svg [^>]*aria-labelledby="${id}-title"[\\s\\S]*?</svg>`))
  if (!match) throw new Error(`no chart ${id} on the page`)
  return match[0]
}

/** The value axis' labels, bottom to top. */
function axisLabels(svg: string): string[] {
  const grid = svg.match(/<g class="chart-grid"[^>]*>([\s\S]*?)<\/g>/)![1]
  return [...grid.matchAll(/<text [^>]*>([^<]*)<\/text>/g)].map((match) => match[1])
}

/** The y of each point of a line chart. */
function pointYs(svg: string): number[] {
  return [...svg.matchAll(/<circle class="chart-point" [^>]*cy="([\d.]+)"/g)].map((match) =>
    Number(match[1])
  )
}

async function markupOf(token: string, fiat: string) {
  const row = await db.from('rate_markups').where({ token, fiat, api_key_id: 0 }).first()
  return row?.markup ?? null
}

test.group('Console rates page', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await emptyAuditLog()
    configCache.invalidate()
  })

  test('no source configured: the empty state says how to add one', async ({ assert }) => {
    const { agent } = await signedIn()
    const page = await agent.get('/rates')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.include(text, 'No live rate source is configured')
    assert.include(text, 'rate.sources')
    assert.include(text, 'node ace rate:sources')
    assert.notInclude(page.text, '<svg xmlns')
    assert.match(page.text, /href="\/admin\/rates" aria-current="page"/)
  })

  test('a live pair: rate, markup and the rate charged, dropped outlier, last answers, fixed rates', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    await livePair({
      rate: '7.2',
      ok: true,
      sources: {
        used: ['binance', 'okx'],
        dropped: [{ source: 'kraken', price: '7.9', deviation_percent: '9.72' }],
        stale: ['coinbase'],
        failed: ['coingecko'],
      },
      answers: [
        { source: 'binance', price: '7.2', quote: 'USDT' },
        { source: 'coingecko', price: null, error: 'HTTP 429: rate limited' },
      ],
    })
    await db.table('rate_markups').insert({
      token: 'USDT',
      fiat: 'CNY',
      markup: '~1.02',
      created_at: Date.now(),
      updated_at: Date.now(),
    })
    await db.table('rates').insert({
      token: 'ETH',
      fiat: 'EUR',
      rate: '3000',
      source: 'fixed',
      created_at: Date.now(),
      updated_at: Date.now(),
    })
    const page = await agent.get('/rates')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.include(text, 'USDT / CNY')
    assert.include(text, '1 USDT = 7.2 CNY')
    assert.include(text, 'Markup ~1.02')
    assert.include(text, '1 USDT = 7.344 CNY')
    assert.include(text, 'kraken 7.9 (9.72 %)')
    assert.include(text, 'coinbase')
    assert.include(text, 'HTTP 429: rate limited')
    assert.include(text, 'ETH / EUR')
    assert.include(page.text, 'href="/admin/settings/rates"')
    // No history, no paid order: no chart.
    assert.notInclude(page.text, '<svg xmlns')
    assert.include(text, 'No history in the last 30 days yet')
  })

  test('a refused pair shows why', async ({ assert }) => {
    const { agent } = await signedIn()
    await settings.set('rate.sources', 'binance')
    await livePair({
      rate: null,
      ok: false,
      reason: 'only 1 fresh source agrees, 2 needed',
      sources: { used: [], dropped: [], stale: ['binance'], failed: [] },
    })
    const text = pageText((await agent.get('/rates')).text)
    assert.include(text, 'refused')
    assert.include(text, 'Orders in USDT/CNY are refused: only 1 fresh source agrees, 2 needed')
    assert.notInclude(text, 'No live rate source is configured')
  })

  test('30 days of rate and paid volume as accessible SVG charts', async ({ assert }) => {
    const { agent } = await signedIn()
    await livePair({ rate: '7.2', ok: true, sources: { used: ['binance'] } })
    const now = Date.now()
    const day = 86_400_000
    await db.table('rate_history').multiInsert([
      { token: 'USDT', fiat: 'CNY', rate: '7.1', at: now - 3 * day },
      { token: 'USDT', fiat: 'CNY', rate: '7.3', at: now - day },
      { token: 'USDT', fiat: 'CNY', rate: '7.2', at: now },
      // Older than 30 days: left out.
      { token: 'USDT', fiat: 'CNY', rate: '1.5', at: now - 40 * day },
    ])
    await insertPaidOrders(3, (index) => ({
      trade_id: `RATE${index}`,
      status: index === 2 ? 1 : 2,
      paid_at: now - (index === 0 ? 2 * day : 0),
      amount: index === 0 ? '150.5' : '49.5',
    }))
    const page = await agent.get('/rates')
    assert.match(
      page.text,
      /<svg [^>]*role="img" aria-labelledby="rate-USDT_CNY-title"/,
      'the rate chart'
    )
    assert.include(
      page.text,
      '<title id="rate-USDT_CNY-title">USDT in CNY, last rate of each day</title>'
    )
    assert.include(
      page.text,
      '<title id="volume-USDT_CNY-title">Paid in USDT, per day (CNY)</title>'
    )
    assert.notInclude(page.text, '>1.5<')
    // The volume: 150.5 two days ago, 49.5 today (the unpaid order is not counted).
    assert.include(page.text, 'Paid (CNY): 200 in total, highest 150.5')
    assert.include(page.text, 'between 7.1 and 7.3 CNY per USDT, 7.2 at the end.')
  })

  test('the rate chart’s axis spans the rate’s range (7.18 to 7.26), not from 0; the volume’s starts at 0', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    await livePair({ rate: '7.22', ok: true, sources: { used: ['binance'] } })
    await livePair({ fiat: 'USD', rate: '1.0002', ok: true, sources: { used: ['binance'] } })
    const now = Date.now()
    const day = 86_400_000
    await db.table('rate_history').multiInsert([
      { token: 'USDT', fiat: 'CNY', rate: '7.18', at: now - 3 * day },
      { token: 'USDT', fiat: 'CNY', rate: '7.26', at: now - 2 * day },
      { token: 'USDT', fiat: 'CNY', rate: '7.22', at: now },
      // A rate that has not moved.
      { token: 'USDT', fiat: 'USD', rate: '1.0002', at: now - 2 * day },
      { token: 'USDT', fiat: 'USD', rate: '1.0002', at: now },
    ])
    await insertPaidOrders(1, () => ({ trade_id: 'RATEAXIS', paid_at: now, amount: '72.2' }))
    const page = await agent.get('/rates')
    assert.equal(page.status, 200)

    // 7.18..7.26 with a margin, in round steps: the labels show the bounds.
    const rate = chartSvg(page.text, 'rate-USDT_CNY')
    assert.deepEqual(axisLabels(rate), ['7.175', '7.2', '7.225', '7.25', '7.275'])
    // Plot 188 high (240 − 28 − 24), from y 216 up: 7.18 near the bottom, 7.26 near the top.
    const ys = pointYs(rate)
    assert.deepEqual(ys, [206.6, 56.2, 56.2, 131.4])
    assert.isAbove(Math.max(...ys) - Math.min(...ys), 188 / 2, 'the move fills most of the plot')
    assert.include(pageText(page.text), 'between 7.18 and 7.26 CNY per USDT, 7.22 at the end.')

    // All the points equal: an axis around the value, the line inside the plot.
    const flat = chartSvg(page.text, 'rate-USDT_USD')
    assert.deepEqual(axisLabels(flat), ['0.99', '0.996', '1.002', '1.008', '1.014'])
    for (const y of pointYs(flat)) {
      assert.isAbove(y, 28)
      assert.isBelow(y, 216)
    }

    // The volume's bars still start at 0.
    const volume = chartSvg(page.text, 'volume-USDT_CNY')
    assert.equal(axisLabels(volume)[0], '0')
  })

  test('setting a markup goes through RateAdmin and is audited; clearing deletes it, audited', async ({
    assert,
  }) => {
    const { agent, user } = await signedIn()
    await livePair({ rate: '7.2', ok: true, sources: { used: ['binance'] } })
    const set = await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', markup_USDT_CNY: '+0.3' },
      '/rates'
    )
    assert.equal(set.status, 302)
    assert.equal(set.location, '/admin/rates#pair-USDT_CNY')
    assert.equal(await markupOf('USDT', 'CNY'), '+0.3')
    const audit = await db.from('audit_log').where('action', 'rate.set').first()
    assert.equal(audit.subject_id, 'USDT/CNY')
    assert.equal(audit.actor, user.email)
    const after = pageText((await agent.get('/rates')).text)
    assert.include(after, 'Markup of USDT/CNY set to +0.3.')
    assert.include(after, '1 USDT = 7.5 CNY')

    const cleared = await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', markup_USDT_CNY: '+0.3', clear: '1' },
      '/rates'
    )
    assert.equal(cleared.status, 302)
    assert.isNull(await markupOf('USDT', 'CNY'))
    const clearRow = await db.from('audit_log').where('action', 'rate.markup_clear').first()
    assert.equal(clearRow.subject_id, 'USDT/CNY')
    assert.equal(clearRow.actor, user.email)
    assert.include(clearRow.before, '+0.3')
    assert.include(
      pageText((await agent.get('/rates')).text),
      'No markup: payers are charged the live rate.'
    )
  })

  test('a refused markup: the error at its field, nothing changed nor audited', async ({
    assert,
  }) => {
    const { agent } = await signedIn()
    await livePair({ rate: '7.2', ok: true, sources: { used: ['binance'] } })
    for (const bad of ['~9', '7.25', '']) {
      const refused = await agent.submit(
        '/rates/markup',
        { token: 'USDT', fiat: 'CNY', markup_USDT_CNY: bad },
        '/rates'
      )
      assert.equal(refused.status, 302, bad)
      const page = await agent.get('/rates')
      assert.equal(page.status, 200)
      assert.match(page.text, /<p class="field-error" id="f-markup_USDT_CNY-error">[^<]+<\/p>/, bad)
      const text = pageText(page.text)
      assert.include(text, 'Nothing changed: the markup of USDT/CNY was refused.')
      if (bad === '~9') assert.include(text, 'moves the rate by more than half')
      if (bad === '7.25') assert.include(text, 'a fixed rate is set under Settings')
    }
    assert.isNull(await markupOf('USDT', 'CNY'))
    assert.equal(await countRows('rates'), 0)
    assert.equal(await countRows('audit_log', { action: 'rate.set' }), 0)
  })

  test("a markup for one API key: set and shown beside the pair's, refused at its own field, cleared", async ({
    assert,
  }) => {
    const { agent, user } = await signedIn()
    await livePair({ rate: '7.2', ok: true, sources: { used: ['binance'] } })
    const key = await db.from('api_keys').where('pid', '1000').firstOrFail()
    const keyField = 'key_markup_USDT_CNY'

    const refused = await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', api_key: '1000', [keyField]: '7.3' },
      '/rates'
    )
    assert.equal(refused.status, 302)
    let page = await agent.get('/rates')
    assert.match(page.text, new RegExp(`<p class="field-error" id="f-${keyField}-error">[^<]+</p>`))
    assert.notInclude(
      page.text,
      'id="f-markup_USDT_CNY-error"',
      "the pair's own field is not blamed"
    )
    assert.match(page.text, /<details class="disclosure" open>/, 'the refused form stays open')
    assert.include(
      pageText(page.text),
      'Nothing changed: the markup of USDT/CNY for API key 1000 was refused.'
    )
    assert.equal(await countRows('rate_markups'), 0)

    const unknown = await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', api_key: '9999', [keyField]: '~1.05' },
      '/rates'
    )
    assert.equal(unknown.status, 302)
    assert.include(pageText((await agent.get('/rates')).text), 'No API key with pid 9999')
    assert.equal(await countRows('rate_markups'), 0)

    const set = await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', api_key: '1000', [keyField]: '~1.05' },
      '/rates'
    )
    assert.equal(set.status, 302)
    const row = await db.from('rate_markups').where({ token: 'USDT', fiat: 'CNY' }).firstOrFail()
    assert.equal(Number(row.api_key_id), Number(key.id))
    assert.equal(row.markup, '~1.05')
    assert.isNull(await markupOf('USDT', 'CNY'), "the pair's markup is untouched")
    page = await agent.get('/rates')
    const text = pageText(page.text)
    assert.include(text, 'Markup of USDT/CNY for API key 1000 set to ~1.05.')
    assert.include(text, 'No markup: payers are charged the live rate.')
    // 7.2 × 1.05 = 7.56, in the table of key markups.
    assert.match(text, /1000\s+~1\.05\s+7\.56/)
    const audit = await db.from('audit_log').where('action', 'rate.set').firstOrFail()
    assert.equal(audit.subject_id, 'USDT/CNY key 1000')
    assert.equal(audit.actor, user.email)

    const cleared = await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', api_key: '1000', clear: '1' },
      '/rates'
    )
    assert.equal(cleared.status, 302)
    assert.equal(await countRows('rate_markups'), 0)
    assert.include(
      pageText((await agent.get('/rates')).text),
      "Markup of USDT/CNY for API key 1000 cleared: its orders follow the pair's markup."
    )
    const clearRow = await db.from('audit_log').where('action', 'rate.markup_clear').firstOrFail()
    assert.equal(clearRow.subject_id, 'USDT/CNY key 1000')
  })

  test('a viewer sees the page but gets 403 on a change', async ({ assert }) => {
    const { agent } = await signedIn('viewer')
    await livePair({ rate: '7.2', ok: true, sources: { used: ['binance'] } })
    const page = await agent.get('/rates')
    assert.equal(page.status, 200)
    assert.include(pageText(page.text), '1 USDT = 7.2 CNY')
    const refused = await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', markup_USDT_CNY: '~1.02' },
      '/rates'
    )
    assert.equal(refused.status, 403)
    assert.isNull(await markupOf('USDT', 'CNY'))
    assert.equal(await countRows('audit_log', { action: 'rate.set' }), 0)
  })
})
