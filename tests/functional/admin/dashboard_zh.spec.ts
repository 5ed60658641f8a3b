import { test } from '@japa/runner'
import { pageText } from '#tests/helpers/admin'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'
import { DAY, seedOrderRow, seededTradeId } from '#tests/helpers/order_rows'
import { bscFarBehind, freshDashboard, insertCursor, watchChain } from '#tests/helpers/chain_rows'
import i18nManager from '@adonisjs/i18n/services/main'
import dashboardStats from '#services/admin/dashboard_stats'
import { dashboardView } from '#services/admin/dashboard_presenter'

test.group('Console dashboard in Chinese', (group) => {
  group.each.setup(() => freshDashboard())
  group.each.timeout(60_000)

  test('a new installation: the first steps, the health card and the scanners in Chinese', async ({
    assert,
  }) => {
    const page = await (await adminReading('zh-CN')).get('/')
    assertChinese(assert, page, [
      '网关概览',
      '还没有订单',
      '为商户创建 API 密钥',
      '健康检查',
      '今日订单',
      '链扫块',
      '最近订单',
    ])
    assert.include(page.text, '<title>仪表盘 · 网关控制台</title>')
    assert.include(
      page.text,
      '<a href="/admin/api-keys">为商户创建 API 密钥</a>：商户用它为请求签名。'
    )
  })

  test('figures, the chart and the scanners’ states in Chinese; values as they are', async ({
    assert,
  }) => {
    const now = Date.now()
    await seedOrderRow({ status: 2, createdAt: now - 2000, actualAmount: '10.5', amount: '76.13' })
    await seedOrderRow({ status: 1, createdAt: now - 500 })
    await seedOrderRow({ status: 2, createdAt: now - 3 * DAY, actualAmount: '1.1' })
    await bscFarBehind(now)
    const page = await (await adminReading('zh-CN', { role: 'viewer' })).get('/')
    assertChinese(assert, page)
    const text = pageText(page.text)
    assert.include(text, '今日订单 2 已支付 1 · 等待中 1')
    assert.include(text, '7 天转化率')
    assert.include(text, '已创建 2 3 3')
    assert.include(text, '落后 远远落后于最新区块。 50,000,000 最新区块 50,000,100')
    assert.include(text, '100 个区块（≈ 5 分钟） 需等待 15 个确认')
    assert.include(text, '1 个扫块程序需要关注')
    assert.include(text, `${seededTradeId(2)} 1000 · O2 100 CNY`)
    assert.include(text, '等待付款')
    assert.match(text, /\d+ 秒前|刚刚/)
    assert.include(page.text, '已创建：共 3')
    assert.match(page.text, /<th scope="col">日期<\/th>/)
    assert.match(text, /\d+月\d+日/)

    // English through the catalogue is the presenter's English, word for word.
    await watchChain('ethereum', now, { address: 'eth-wallet' })
    await insertCursor('ethereum', now, { caught_up: false, last_scan_at: now - 2 * 3600_000 })
    const figures = await dashboardStats.read({ timeZone: 'UTC' })
    const english = dashboardView(figures)
    assert.deepEqual(dashboardView(figures, i18nManager.locale('en')), english)
    assert.isTrue(english.scanners.some((scanner) => scanner.help.startsWith('No scan for 2 h:')))
    const chinese = dashboardView(figures, i18nManager.locale('zh-CN'))
    assert.isTrue(
      chinese.scanners.some((scanner) => scanner.help.startsWith('已有 2 小时没有扫描'))
    )
  })
})
