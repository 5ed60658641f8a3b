import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import configCache from '#services/config_cache'
import { countRows, emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { ConsoleAgent, createConsoleUser, pageText } from '#tests/helpers/console'
import { insertOrders, type OrderRow } from '#tests/helpers/order_rows'

async function signedIn(role: 'admin' | 'viewer' = 'admin') {
  const user = await createConsoleUser({ role })
  return { user, agent: await ConsoleAgent.signIn(user) }
}

/** A pair as the workers leave it: its current rate and each source's last answer. */
async function livePair(fields: {
  token?: string
  fiat?: string
  rate: string | null
  ok: boolean
  reason?: string
  sources: Record<string, unknown>
  answers?: { source: string; price: string | null; quote?: string; error?: string }[]
}) {
  const token = fields.token ?? 'USDT'
  const fiat = fields.fiat ?? 'CNY'
  const now = Date.now()
  await db.table('rate_current').insert({
    token,
    fiat,
    rate: fields.rate,
    ok: fields.ok,
    reason: fields.reason ?? '',
    sources: JSON.stringify(fields.sources),
    computed_at: now - 30_000,
  })
  for (const answer of fields.answers ?? []) {
    await db.table('rate_answers').insert({
      source: answer.source,
      token,
      fiat,
      price: answer.price,
      quote: answer.quote ?? fiat,
      fetched_at: now - 90_000,
      error: answer.error ?? '',
    })
  }
}

async function markupOf(token: string, fiat: string) {
  const row = await db.from('rate_markups').where({ token, fiat }).first()
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
    await insertOrders(3, (index) => {
      const row: Partial<OrderRow> & { paid_at: number; amount: string } = {
        trade_id: `RATE${index}`,
        status: index === 2 ? 1 : 2,
        token: 'USDT',
        paid_at: now - (index === 0 ? 2 * day : 0),
        amount: index === 0 ? '150.5' : '49.5',
      }
      return row
    })
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
