import { test } from '@japa/runner'
import i18nManager from '@adonisjs/i18n/services/main'
import settings from '#settings/settings_service'
import { SETTINGS } from '#settings/definitions'
import type { SettingDefinition } from '#settings/setting_types'
import pluginsConfig from '#config/plugins'
import {
  allSettingsGroups,
  fieldPrefix,
  groupBase,
  settingErrorText,
  settingMessageKey,
} from '#services/admin/settings_groups'
import { emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'
import { atServerProcess } from '#tests/helpers/processes'

/** The settings the settings pages show: the core's and the bundled plugins', but notify.* (Notifications). */
async function pageDefinitions(): Promise<Map<string, SettingDefinition<unknown>>> {
  const all = new Map<string, SettingDefinition<unknown>>(Object.entries(SETTINGS))
  for (const load of Object.values(pluginsConfig)) {
    const plugin = (await load()).default
    for (const [key, definition] of Object.entries(plugin.settings ?? {}))
      all.set(key, definition as SettingDefinition<unknown>)
  }
  for (const key of all.keys()) if (key.startsWith('notify.')) all.delete(key)
  return all
}

test.group('Console settings in Chinese: the catalogue', () => {
  test('every setting of a page has a label and a help in both languages; the English ones are the group’s label and the definition’s text', async ({
    assert,
  }) => {
    const english = i18nManager.locale('en')
    const chinese = i18nManager.locale('zh-CN')
    const labels = new Map(allSettingsGroups().flatMap((group) => Object.entries(group.labels)))
    const groupOf = new Map(
      allSettingsGroups().flatMap((group) => Object.keys(group.labels).map((key) => [key, group]))
    )
    const definitions = await pageDefinitions()
    assert.isAbove(definitions.size, 50)
    for (const [key, definition] of definitions) {
      // A plugin's setting has its texts in that plugin's catalogue (plugins/<name>/lang).
      const base = `${fieldPrefix(groupOf.get(key)!, key)}${settingMessageKey(key)}`
      for (const part of ['label', 'help']) {
        assert.isTrue(english.hasMessage(`${base}.${part}`), `en ${base}.${part}`)
        assert.isTrue(chinese.hasMessage(`${base}.${part}`), `zh-CN ${base}.${part}`)
      }
      assert.equal(english.t(`${base}.label`), labels.get(key), key)
      const sentence = /[.!?)]$/.test(definition.description)
        ? definition.description
        : `${definition.description}.`
      assert.equal(english.t(`${base}.help`), sentence, key)
    }
    for (const group of allSettingsGroups()) {
      assert.equal(english.t(`${groupBase(group)}.title`), group.title)
      assert.equal(english.t(`${groupBase(group)}.description`), group.description)
      assert.isTrue(chinese.hasMessage(`${groupBase(group)}.title`), `zh-CN ${group.id}`)
    }
    // The plugins' settings are in their own catalogues, none left in the console's.
    assert.isTrue(english.hasMessage('plugins.compat.settings.field.compat_default_token.label'))
    assert.isTrue(chinese.hasMessage('plugins.rate_okx.settings.field.rate_okx_p2p_url.label'))
    assert.isFalse(english.hasMessage('admin.settings.field.compat_default_token.label'))
    assert.isFalse(english.hasMessage('admin.settings.group.provider.title'))
  })
})

test.group('Console settings in Chinese: refused values', () => {
  test('the setting types’ messages read Chinese; English stays as settings:set says it; an unknown one is kept', ({
    assert,
  }) => {
    const chinese = i18nManager.locale('zh-CN')
    const english = i18nManager.locale('en')
    const cases: [string, string][] = [
      ['must be a whole number', '必须是整数'],
      ['must be between 1 and 10000', '必须在 1 到 10000 之间'],
      ['must be at most 100 characters', '最多 100 个字符'],
      ['must be an http(s) URL or empty', '必须是 http(s) 地址或留空'],
      ['must be true or false', '必须是 true 或 false'],
      ['must be one of memory, database, redis', '必须是以下之一：memory, database, redis'],
      ['"nope" is not a source name', '“nope”不是有效的汇率源名称'],
      [
        '"1.2.3" is not an IP address or CIDR range',
        '“1.2.3”不是有效的网络地址（IP 或 CIDR 网段）',
      ],
      ['must list at most 100 addresses or ranges', '最多列出 100 个地址或网段'],
      ['is not a setting of the Order lifetime page', '不是“订单有效期”页面的设置'],
      ['type a new value or tick clear, not both', '请输入新值或勾选清除，不能同时进行'],
      ['something new', 'something new'],
    ]
    for (const [message, words] of cases) {
      assert.equal(settingErrorText(english, 'Label', message), `Label ${message}.`)
      assert.equal(settingErrorText(chinese, '标签', message), `标签：${words}。`)
    }
  })
})

test.group('Console settings in Chinese: the pages', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await emptyAuditLog()
  })

  test('every settings page reads Chinese: titles, labels, help, defaults, buttons', async ({
    assert,
  }) => {
    const agent = await adminReading()
    const expected: Record<string, string[]> = {
      site: ['站点与品牌', '收银台名称', '收银台预览', '我已付款', '保存站点与品牌'],
      orders: ['订单有效期（分钟）', '待支付订单的有效期，单位为分钟。默认值：10。'],
      rates: ['固定汇率', '还没有固定汇率', '添加或替换汇率', 'CoinGecko API 密钥'],
      callbacks: ['失败后重试次数', '允许私有地址', '开启', '关闭'],
      rate_limits: ['频率限制', '每分钟创建订单数'],
      chains: ['链监听', '粉尘阈值（%）'],
      compat: ['兼容模式默认值', '默认法币'],
      provider: ['服务商账户', '商户密钥', '尚未保存。'],
      metrics: ['监控', '监控令牌'],
      console: ['控制台登录', '管理员必须使用两步验证登录'],
    }
    for (const [id, texts] of Object.entries(expected)) {
      const page = await agent.get(`/settings/${id}`)
      assertChinese(assert, page, [], id)
      const text = pageText(page.text)
      assert.include(text, '网关的运行方式。', id)
      for (const wanted of texts) assert.include(text, wanted, id)
      // Values stay values: setting names are not translated.
      assert.include(page.text, 'data-setting=', id)
    }
    const rates = pageText((await agent.get('/settings/rates')).text)
    assert.include(rates, 'rate.sources')
    assert.include(rates, 'GET {url}/{fiat}.json → {fiat: {token: rate}}')
    const missing = await agent.get('/settings/nope')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), '没有这个名称的设置页面。')
  })

  test('a save, a refused value and a fixed rate are told in Chinese', async ({ assert }) => {
    const agent = await adminReading()
    await agent.submit('/settings/orders', {
      order__expiration_minutes: '30',
      order__late_payment_margin_seconds: '900',
      order__amount_max_steps: '100',
    })
    assert.strictEqual(await settings.get('order.expiration_minutes'), 30)
    assert.include(
      pageText((await agent.get('/settings/orders')).text),
      '已保存订单有效期：1 项设置已更改。运行中的进程会在 2 秒内使用新值。'
    )

    await agent.submit('/settings/orders', {
      order__expiration_minutes: '45',
      order__late_payment_margin_seconds: 'soon',
      order__amount_max_steps: '0',
    })
    const refused = pageText((await agent.get('/settings/orders')).text)
    assert.include(refused, '未保存任何内容：有些值需要修改（见下方提示）。')
    assert.include(refused, '迟到付款保留时间（秒）：必须是整数。')
    assert.include(refused, '金额尝试步数：必须在 1 到 10000 之间。')

    await agent.submit(
      '/settings/rates/fixed',
      { token: 'USDT', fiat: 'CNY', rate: '7.25' },
      '/settings/rates'
    )
    const rates = pageText((await agent.get('/settings/rates')).text)
    assert.include(rates, '已设置固定汇率：1 USDT = 7.25 CNY。')
    assert.include(rates, 'USDT 兑 CNY 的新汇率')
  })

  test('a group whose plugin is off says so in Chinese, and so does a refused save', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    await atServerProcess({ PLUGINS: '-provider' }, async () => {
      const agent = await AdminAgent.signIn(admin)
      agent.headers['accept-language'] = 'zh-CN'
      const page = await agent.get('/settings/provider')
      assert.include(page.text, '<html lang="zh-CN">')
      const text = pageText(page.text)
      assert.include(text, 'provider 插件已关闭（PLUGINS），因此现在无法修改这些设置。')
      assert.match(
        page.text,
        /服务商账户\s*<\/span>\s*<span class="badge badge-neutral">已关闭<\/span>/
      )
      await agent.post('/settings/provider', { provider__shop_id: 'changed' })
      assert.include(
        pageText((await agent.get('/settings/provider')).text),
        'provider 插件已关闭（PLUGINS）：插件重新启用之前，无法修改其设置'
      )
    })
  }).timeout(60_000)
})
