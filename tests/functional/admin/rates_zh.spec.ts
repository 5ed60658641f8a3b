import { test } from '@japa/runner'
import { resetDatabase } from '#tests/helpers/database'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'
import {
  DAY,
  insertLiveAndRefusedPairs,
  insertMonthOfRates,
  insertPaidOrders,
} from '#tests/helpers/rate_rows'

/** USDT/CNY live with 30 days of history and paid orders; TRX/USD refused (the job's English reason). */
async function seed(now: number) {
  await insertLiveAndRefusedPairs(now - 5 * 60_000)
  await insertMonthOfRates(now, (day) => (day === 0 ? '7.2' : '7.1'))
  await insertPaidOrders(2, (index) => ({
    trade_id: `ZH${index}`,
    paid_at: now - index * DAY,
    amount: index === 0 ? '150.5' : '49.5',
  }))
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
    // The page's markup form for USDT/CNY, sent; then the page it comes back to.
    const markup = async (fields: Record<string, string>) => {
      await agent.submit('/rates/markup', { token: 'USDT', fiat: 'CNY', ...fields }, '/rates')
      return agent.get('/rates')
    }
    assertChinese(assert, await markup({ markup_USDT_CNY: '~1.02' }), [
      'USDT/CNY 的加价已设为 ~1.02。',
      '加价 ~1.02 ：付款人按 1 USDT = 7.344 CNY 支付。',
    ])
    assertChinese(assert, await markup({ markup_USDT_CNY: '7.25' }), [
      '未做更改：USDT/CNY 的加价被拒绝。',
      '加价以 ~、+ 或 - 开头',
    ])
    assertChinese(assert, await markup({ markup_USDT_CNY: '', clear: '1' }), [
      '已清除 USDT/CNY 的加价：直接使用实时汇率。',
    ])
    assertChinese(assert, await markup({ token: 'bad pair', fiat: 'x' }), [
      '未做更改：这不是本页显示的交易对。',
    ])
  })
})
