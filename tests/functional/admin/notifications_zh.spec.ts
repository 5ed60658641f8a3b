import { test } from '@japa/runner'
import { notificationDelivery } from '#tests/helpers/notification_rows'
import i18nManager from '@adonisjs/i18n/services/main'
import settings from '#settings/settings_service'
import notificationChannels from '#notifications/channel_registry'
import { channelTextPrefix, problemText } from '#controllers/admin/notifications_controller'
import { emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { pageText } from '#tests/helpers/admin'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'

/** A given-up callback's event (`severity`) and its delivery through `channel`, tried twice, next in a minute. */
function delivery(channel: string, target: string, status: string, severity: string) {
  return notificationDelivery({
    channel,
    target,
    status,
    severity,
    event: 'callback.gave_up',
    attempts: 2,
    nextAttemptAt: Date.now() + 60_000,
    lastError: status === 'failed' ? 'HTTP 404: no such hook' : '',
  })
}

test.group('Console notifications in Chinese', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await emptyAuditLog()
  })

  test('the page reads Chinese: channels, rules, their settings, problems, deliveries; identifiers stay', async ({
    assert,
  }) => {
    const agent = await adminReading()
    await settings.set('notify.webhook.url', 'https://hooks.example/notify')
    await settings.set('notify.webhook.secret', 'a-shared-secret-1234')
    await delivery('webhook', 'https://hooks.example/notify', 'failed', 'critical')
    await delivery('email', 'ops@example.com', 'pending', 'warning')
    const page = await agent.get('/notifications')
    assertChinese(assert, page, [
      '发生事件时发给你（运营者）的消息',
      '渠道：webhook',
      '以签名的 JSON POST 发送到运营者的地址',
      '通过 SMTP 服务器发送电子邮件',
      '暂时无法发送：没有机器人令牌（notify.telegram.bot_token）；没有聊天 ID（notify.telegram.chat_ids）。',
      '暂时无法发送：尚未配置：请设置 notify.email.host, notify.email.from, notify.email.recipients。',
      '已关闭：开启“发送通知”之前，事件不会通过 webhook 发送。',
      '发送通知',
      '通过 webhook 发送通知。默认值：false。',
      '免打扰时段',
      '最低严重级别',
      '接收地址',
      '签名密钥',
      '机器人令牌',
      '已保存：…1234。留空则保持不变。',
      '清除已保存的签名密钥',
      '尚未保存。',
      '投递',
      '放弃前的尝试次数',
      '保存投递设置',
      '最近投递',
      '最新的 50 条消息',
      '严重',
      '失败',
      '待发送',
      '下次尝试：',
    ])
    const text = pageText(page.text)
    // Values stay values: event names, setting names, severities offered by their value.
    assert.include(text, 'callback.gave_up')
    assert.include(text, 'notify.webhook.events')
    assert.match(page.text, /<option value="critical"[^>]*>严重<\/option>/)
    assert.match(page.text, /<option value="failed"[^>]*>失败<\/option>/)
    assert.include(text, '发送测试 通过 webhook')
    // Every field shown has its Chinese words: no definition's English is left.
    const shown = [...page.text.matchAll(/data-setting="([\w.]+)"/g)].map((match) => match[1])
    assert.isAbove(shown.length, 20)
    for (const key of shown) {
      const description = settings.definition(key).description
      assert.notInclude(text, description.slice(0, 40), key)
    }
  })

  test('a save, a refused value and a test refused are told in Chinese', async ({ assert }) => {
    const agent = await adminReading()
    await agent.submit(
      '/notifications/webhook/settings',
      { notify__webhook__enabled: 'true' },
      '/notifications'
    )
    assert.isTrue(await settings.read('notify.webhook.enabled'))
    assert.include(
      pageText((await agent.get('/notifications')).text),
      '已保存webhook 渠道：1 项设置已更改。运行中的进程会在 2 秒内使用新值。'
    )

    await agent.submit(
      '/notifications/webhook/settings',
      { notify__webhook__quiet_hours: '25:00-26:00', notify__webhook__events: 'bad name' },
      '/notifications'
    )
    const refused = pageText((await agent.get('/notifications')).text)
    assert.include(refused, 'webhook 渠道未保存任何内容：有些值需要修改（见下方提示）。')
    assert.include(refused, '免打扰时段：必须是 HH:MM-HH:MM（24 小时制，两个时间不同）或留空。')
    assert.include(refused, '事件：“bad name”不是有效的事件名、order.* 这样的前缀或 *。')

    await agent.submit(
      '/notifications/settings',
      { notify__time_zone: 'Mars/Base' },
      '/notifications'
    )
    assert.include(
      pageText((await agent.get('/notifications')).text),
      '时区：必须是时区名称，例如 UTC 或 Europe/Berlin。'
    )

    await agent.submit('/notifications/webhook/test', {}, '/notifications')
    assert.include(
      pageText((await agent.get('/notifications')).text),
      '未排队测试消息：webhook 渠道暂时无法发送（notify.webhook.url 为空）。'
    )
  })

  test('the bundled channels’ problems are all known to the catalogue; an unknown one is shown as it is', async ({
    assert,
  }) => {
    const chinese = i18nManager.locale('zh-CN')
    const english = i18nManager.locale('en')
    for (const problem of [
      'notify.webhook.url is empty',
      'notify.webhook.secret is empty (the receiver could not check the signature)',
      'no bot token (notify.telegram.bot_token); no chat ids (notify.telegram.chat_ids)',
      'the bot token cannot be read: bad seal',
      'not configured: set notify.email.host, notify.email.from',
      'notify.email.user is set but notify.email.password is empty',
    ]) {
      assert.equal(problemText(english, problem), problem)
      assert.notMatch(
        problemText(chinese, problem),
        /\b(is empty|no bot|cannot be|not configured|is set)\b/
      )
    }
    assert.equal(problemText(chinese, 'something new'), 'something new')
    // Every bundled channel's description has its words.
    for (const channel of notificationChannels.all()) {
      const key = `${channelTextPrefix(channel.name)}.description`
      assert.equal(english.t(key), channel.description, channel.name)
    }
  })
})
