import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { resetDatabase } from '#tests/helpers/database'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'
import { insertOrders, type OrderRow } from '#tests/helpers/order_rows'

const DAY = 86_400_000

/** USDT/CNY live with 30 days of history and paid orders; TRX/USD refused (the job's English reason). */
async function seed(now: number) {
  await db.table('rate_current').multiInsert([
    {
      token: 'USDT',
      fiat: 'CNY',
      rate: '7.2',
      ok: true,
      reason: '',
      sources: JSON.stringify({ used: ['binance', 'okx'], dropped: [], stale: [], failed: [] }),
      computed_at: now - 5 * 60_000,
    },
    {
      token: 'TRX',
      fiat: 'USD',
      rate: null,
      ok: false,
      reason: 'only 1 fresh source agrees, 2 needed',
      sources: JSON.stringify({ used: [], dropped: [], stale: ['binance'], failed: [] }),
      computed_at: now - 5 * 60_000,
    },
  ])
  const history = []
  for (let day = 29; day >= 0; day--)
    history.push({
      token: 'USDT',
      fiat: 'CNY',
      rate: day === 0 ? '7.2' : '7.1',
      at: now - day * DAY,
    })
  await db.table('rate_history').multiInsert(history)
  await insertOrders(2, (index) => {
    const row: Partial<OrderRow> & { paid_at: number; amount: string } = {
      trade_id: `ZH${index}`,
      status: 2,
      token: 'USDT',
      paid_at: now - index * DAY,
      amount: index === 0 ? '150.5' : '49.5',
    }
    return row
  })
}

test.group('Console rates page in Chinese', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })

  test('no source configured: the empty state in Chinese, the setting and command as they are', async ({
    assert,
  }) => {
    const agent = await adminReading()
    const page = await agent.get('/rates')
    assertChinese(assert, page, [
      '订单定价所用的汇率',
      '尚未配置实时汇率源',
      '实时汇率来自设置项 rate.sources 中列出的数据源',
      'node ace rate:sources',
      '固定汇率',
    ])
    assert.include(page.text, '<a href="/admin/settings/rates">设置 → 汇率</a>')
  })

  test('pairs, sources, charts and their summaries in Chinese; the job’s reason stays as stored', async ({
    assert,
  }) => {
    const now = Date.now()
    await seed(now)
    const agent = await adminReading()
    const page = await agent.get('/rates')
    assertChinese(assert, page, [
      '5 分钟前计算。',
      '正常',
      '1 USDT = 7.2 CNY',
      '无加价：付款人按实时汇率支付。',
      '最近一次计算中 USDT/CNY 的数据源',
      '剔除（偏差）',
      'TRX/USD 的订单被拒绝：only 1 fresh source agrees, 2 needed',
      '显示数据',
      '设置加价',
    ])
    assert.include(page.text, '<title id="rate-USDT_CNY-title">USDT 兑 CNY，每日最后汇率</title>')
    assert.include(page.text, '<title id="volume-USDT_CNY-title">USDT 每日支付额（CNY）</title>')
    const today = new Date(now)
    const label = `${today.getUTCMonth() + 1}月${today.getUTCDate()}日`
    assert.include(page.text, `至${label}：介于 7.1 与 7.2 CNY/USDT 之间，期末为 7.2。`)
    assert.include(page.text, '已支付（CNY）：合计 200，最高 150.5')
    assert.include(page.text, '<th scope="col">日期</th>')
    assert.include(page.text, 'aria-label="USDT 兑 CNY，每日最后汇率：图表（小屏幕上可横向滚动）"')
  })

  test('a markup set, refused and cleared: the flash messages in Chinese', async ({ assert }) => {
    await seed(Date.now())
    const agent = await adminReading()
    await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', markup_USDT_CNY: '~1.02' },
      '/rates'
    )
    assertChinese(assert, await agent.get('/rates'), [
      'USDT/CNY 的加价已设为 ~1.02。',
      '加价 ~1.02 ：付款人按 1 USDT = 7.344 CNY 支付。',
    ])
    await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', markup_USDT_CNY: '7.25' },
      '/rates'
    )
    assertChinese(assert, await agent.get('/rates'), [
      '未做更改：USDT/CNY 的加价被拒绝。',
      '加价以 ~、+ 或 - 开头',
    ])
    await agent.submit(
      '/rates/markup',
      { token: 'USDT', fiat: 'CNY', markup_USDT_CNY: '', clear: '1' },
      '/rates'
    )
    assertChinese(assert, await agent.get('/rates'), ['已清除 USDT/CNY 的加价：直接使用实时汇率。'])
    await agent.submit('/rates/markup', { token: 'bad pair', fiat: 'x' }, '/rates')
    assertChinese(assert, await agent.get('/rates'), ['未做更改：这不是本页显示的交易对。'])
  })
})
