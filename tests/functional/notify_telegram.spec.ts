import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import type { NotificationMessage } from '#notifications/notification_channel'
import telegramPlugin from '#plugins/telegram/plugin'
import { TelegramChannel } from '#plugins/telegram/telegram_channel'
import { botApiTiming, callBotApi } from '#plugins/telegram/telegram_api'
import { MESSAGE_LIMIT } from '#plugins/telegram/telegram_html'
import {
  ensureTelegramCommands,
  pollerTiming,
  claimUpdates,
  stopTelegramCommands,
  telegramCommandsRunning,
} from '#plugins/telegram/telegram_poller'
import { resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK } from '#tests/helpers/fake_chain'
import { FAKE_BOT_TOKEN, FakeTelegram, parseTelegramHtml } from '#tests/helpers/fake_telegram'

const OPS_CHAT = 111_222_333
const GROUP_CHAT = -1_001_234_567_890
const STRANGER_CHAT = 999_888_777
/** The token's secret half: what must never show. */
const TOKEN_SECRET = FAKE_BOT_TOKEN.split(':')[1]

/** The plugin's settings, known to the settings service even before config/plugins.ts lists it. */
function ensureTelegramSettings() {
  try {
    settings.definition('notify.telegram.bot_token')
  } catch {
    settings.addDefinitions('telegram', telegramPlugin.settings, true)
  }
}

async function configure(fake: FakeTelegram, overrides: Record<string, string> = {}) {
  await settings.setMany({
    'notify.telegram.enabled': 'true',
    'notify.telegram.bot_token': FAKE_BOT_TOKEN,
    'notify.telegram.chat_ids': `${OPS_CHAT}, ${GROUP_CHAT}`,
    'notify.telegram.api_url': fake.url,
    ...overrides,
  })
}

let nextEventId = 1

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function message(overrides: Partial<NotificationMessage> = {}): NotificationMessage {
  const eventId = nextEventId++
  return {
    idempotencyKey: `${eventId}:telegram:${OPS_CHAT}`,
    eventId,
    event: 'order.paid',
    severity: 'info',
    title: `Order paid: 12.50 USDT on tron (order ${1000 + eventId})`,
    lines: ['Trade ID: T-42', 'Merchant order: shop-7'],
    links: [{ label: 'Order', url: 'https://gateway.example/admin/orders/42' }],
    data: { orderId: 42 },
    occurredAt: Date.UTC(2025, 0, 2, 3, 4, 5),
    ...overrides,
  }
}

async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 8000
) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`timed out waiting for ${what}`)
}

test.group('Telegram channel: settings, targets and problem', (group) => {
  const fake = new FakeTelegram()
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    ensureTelegramSettings()
    fake.reset()
  })

  test('the plugin brings the channel, its settings (rules included) and the commands job', ({
    assert,
  }) => {
    assert.equal(telegramPlugin.name, 'telegram')
    assert.deepEqual(
      telegramPlugin.notificationChannels.map((channel) => channel.name),
      ['telegram']
    )
    assert.includeMembers(Object.keys(telegramPlugin.settings), [
      'notify.telegram.enabled',
      'notify.telegram.events',
      'notify.telegram.min_severity',
      'notify.telegram.muted_until',
      'notify.telegram.bot_token',
      'notify.telegram.chat_ids',
      'notify.telegram.api_url',
      'notify.telegram.commands',
      'notify.telegram.update_offset',
    ])
    assert.isTrue(telegramPlugin.settings['notify.telegram.bot_token'].secret)
    assert.isNotTrue(telegramPlugin.settings['notify.telegram.update_offset'].secret)
    assert.equal(
      telegramPlugin.settings['notify.telegram.api_url'].default,
      'https://api.telegram.org'
    )
    assert.isTrue(telegramPlugin.settings['notify.telegram.commands'].default)
    const job = telegramPlugin.jobs[0]
    assert.isAtLeast(job.everySeconds, 1)
    assert.isAtMost(job.everySeconds, 59)
  })

  test('problem() names what is missing; targets() are the chat ids', async ({ assert }) => {
    const channel = new TelegramChannel()
    const nothing = await channel.problem()
    assert.include(nothing, 'no bot token')
    assert.include(nothing, 'no chat ids')
    assert.deepEqual(await channel.targets(), [])

    await settings.set('notify.telegram.bot_token', FAKE_BOT_TOKEN)
    const noChats = await channel.problem()
    assert.notInclude(noChats, 'no bot token')
    assert.include(noChats, 'no chat ids')

    await settings.set('notify.telegram.chat_ids', `${OPS_CHAT}, -100777, @gateway_ops`)
    assert.equal(await channel.problem(), '')
    assert.deepEqual(await channel.targets(), [String(OPS_CHAT), '-100777', '@gateway_ops'])

    await settings.set('notify.telegram.bot_token', '')
    assert.include(await channel.problem(), 'no bot token')
  })

  test('chat ids are numbers or @names; the token is stored encrypted', async ({ assert }) => {
    await assert.rejects(
      () => settings.set('notify.telegram.chat_ids', '12345, ops chat'),
      /ops chat/
    )
    await assert.rejects(() => settings.set('notify.telegram.chat_ids', '@x'), /@x/)
    await assert.rejects(() => settings.set('notify.telegram.bot_token', 'not a token'))
    await settings.set('notify.telegram.bot_token', FAKE_BOT_TOKEN)
    const row = await db.from('settings').where('key', 'notify.telegram.bot_token').firstOrFail()
    assert.notInclude(row.value, TOKEN_SECRET)
    assert.match(row.value, /^app\.v1:/)
  })
})

test.group('Telegram channel: sending', (group) => {
  const fake = new FakeTelegram()
  const channel = new TelegramChannel()
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    ensureTelegramSettings()
    fake.reset()
    fake.addChat({ id: OPS_CHAT, type: 'private' })
    fake.addChat({ id: GROUP_CHAT, type: 'supergroup', title: 'Ops' })
    await configure(fake)
    return () => {
      botApiTiming.requestTimeoutMs = 10_000
    }
  })

  test('delivered: one sendMessage in HTML, title bold, lines, link, no preview', async ({
    assert,
  }) => {
    const outcome = await channel.send(message({ severity: 'warning' }), String(OPS_CHAT))
    assert.deepEqual(outcome, { status: 'delivered' })
    assert.lengthOf(fake.accepted, 1)
    const [sent] = fake.accepted
    assert.equal(sent.chatId, OPS_CHAT)
    assert.match(sent.bold[0], /^Order paid: 12\.50 USDT on tron/)
    assert.include(sent.text, '⚠️')
    assert.include(sent.text, 'Trade ID: T-42\nMerchant order: shop-7')
    assert.deepEqual(sent.links, [
      { href: 'https://gateway.example/admin/orders/42', text: 'Order' },
    ])
    const call = fake.calls.find((entry) => entry.method === 'sendmessage')!
    assert.equal(call.body.parse_mode, 'HTML')
    assert.equal(call.body.disable_web_page_preview, true)
    assert.equal(call.body.chat_id, String(OPS_CHAT))

    // A group (negative id) too, each target its own message.
    assert.deepEqual(await channel.send(message(), String(GROUP_CHAT)), { status: 'delivered' })
    assert.lengthOf(fake.messagesTo(GROUP_CHAT), 1)
  })

  test('HTML escaping: markup, ampersands and quotes arrive as the text they are', async ({
    assert,
  }) => {
    const hostile = `<script>alert("x")</script> & 'q' &amp; </b> <a href="javascript:1">`
    const url = 'https://gateway.example/admin/orders?q="><b>x</b>&page=2'
    const outcome = await channel.send(
      message({
        title: `Payment from ${hostile}`,
        lines: [`Payer note: ${hostile}`, '1 < 2 > 0'],
        links: [{ label: `Open ${hostile}`, url }],
      }),
      String(OPS_CHAT)
    )
    assert.deepEqual(outcome, { status: 'delivered' })
    const [sent] = fake.accepted
    assert.equal(sent.bold[0], `Payment from ${hostile}`)
    assert.include(sent.text, `Payer note: ${hostile}\n1 < 2 > 0`)
    assert.deepEqual(sent.links, [{ href: url, text: `Open ${hostile}` }])
  })

  test('"can\'t parse entities" never happens, and nothing goes over 4096, whatever the text', async ({
    assert,
  }) => {
    // Deterministic pseudo-random text from the characters that break HTML and lengths.
    let seed = 7
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed / 2_147_483_648
    }
    const alphabet = [
      '<',
      '>',
      '&',
      '"',
      "'",
      '/',
      'a',
      'b',
      ' ',
      ';',
      '#',
      '\n',
      'é',
      '😀',
      '\ud83d',
      '&lt;',
      '</a>',
      '<b>',
    ]
    const text = (length: number) =>
      Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('')
    for (let round = 0; round < 25; round++) {
      const long = round % 5 === 0
      const outcome = await channel.send(
        message({
          severity: (['info', 'warning', 'critical'] as const)[round % 3],
          title: text(long ? 900 : 40),
          lines: Array.from({ length: long ? 40 : 3 }, () => text(long ? 300 : 30)),
          links: [
            { label: text(10), url: `https://gateway.example/x?${text(8)}` },
            { label: 'explorer', url: 'ftp://not-a-web-link' },
          ],
        }),
        String(OPS_CHAT)
      )
      assert.deepEqual(outcome, { status: 'delivered' }, `round ${round}`)
    }
    assert.lengthOf(fake.accepted, 25)
    for (const sent of fake.accepted) assert.isAtMost(sent.text.length, MESSAGE_LIMIT)

    // A long message keeps its title and links; its lines are cut with "…".
    const lines = Array.from(
      { length: 100 },
      (_, index) => `Line ${index} ${'😀'.repeat(30)} & <x>`
    )
    await channel.send(message({ title: 'Daily report', lines }), String(OPS_CHAT))
    const report = fake.accepted.at(-1)!
    assert.equal(report.bold[0], 'Daily report')
    assert.lengthOf(report.links, 1)
    assert.include(report.text, '…')
    assert.isAbove(report.text.length, MESSAGE_LIMIT - 100)
    assert.isAtMost(report.text.length, MESSAGE_LIMIT)
    assert.doesNotThrow(() => parseTelegramHtml(report.html))
  })

  test('the fake refuses what Telegram refuses (so that the tests above mean something)', async ({
    assert,
  }) => {
    const target = { apiUrl: fake.url, token: FAKE_BOT_TOKEN }
    const send = (text: string, chatId: string = String(OPS_CHAT)) =>
      callBotApi(target, 'sendMessage', { chat_id: chatId, text, parse_mode: 'HTML' })
    for (const [html, expected] of [
      ['<b>unclosed', "can't parse entities"],
      ['<script>x</script>', "can't parse entities"],
      ['a & b', "can't parse entities"],
      ['<a href=x>link</a>', "can't parse entities"],
      ['x'.repeat(MESSAGE_LIMIT + 1), 'message is too long'],
    ]) {
      const answer = await send(html)
      assert.equal(answer.kind, 'refused', html.slice(0, 20))
      assert.equal(answer.kind === 'refused' && answer.code, 400)
      assert.include(answer.kind === 'refused' ? answer.description : '', expected)
    }
    assert.equal((await send('&lt;b&gt; &amp; &quot; &#33;')).kind, 'ok')
    assert.equal(fake.accepted.at(-1)!.text, '<b> & " !')
    const wrongToken = await callBotApi(
      { ...target, token: '1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      'getMe',
      {}
    )
    assert.deepInclude(wrongToken, { kind: 'refused', code: 401, description: 'Unauthorized' })
  })

  test('429: retry after parameters.retry_after, in HTTP 429 or in an HTTP 200 body', async ({
    assert,
  }) => {
    fake.perChatPerSecond = 1
    fake.retryAfterSeconds = 7
    assert.deepEqual(await channel.send(message(), String(OPS_CHAT)), { status: 'delivered' })
    const limited = await channel.send(message(), String(OPS_CHAT))
    assert.equal(limited.status, 'retry')
    assert.equal(limited.status === 'retry' && limited.retryAfterMs, 7000)
    assert.include(limited.status === 'retry' ? limited.error : '', 'Too Many Requests')
    assert.lengthOf(fake.accepted, 1)

    fake.inject({
      status: 200,
      body: {
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 2',
        parameters: { retry_after: 2 },
      },
    })
    const inBody = await channel.send(message(), String(GROUP_CHAT))
    assert.equal(inBody.status, 'retry')
    assert.equal(inBody.status === 'retry' && inBody.retryAfterMs, 2000)

    // The bot's own limit, across chats.
    fake.perChatPerSecond = 0
    fake.perBotPerSecond = 1
    fake.retryAfterSeconds = 1
    await sleep(1100)
    assert.deepEqual(await channel.send(message(), String(OPS_CHAT)), { status: 'delivered' })
    const botLimited = await channel.send(message(), String(GROUP_CHAT))
    assert.equal(botLimited.status === 'retry' && botLimited.retryAfterMs, 1000)
  })

  test('403 (the bot blocked or kicked): failed, and the chat is stopped', async ({ assert }) => {
    fake.blockChat(OPS_CHAT)
    const outcome = await channel.send(message(), String(OPS_CHAT))
    assert.equal(outcome.status, 'failed')
    assert.isTrue(outcome.status === 'failed' && outcome.stopTarget)
    assert.include(outcome.status === 'failed' ? outcome.error : '', 'bot was blocked by the user')

    fake.blockChat(GROUP_CHAT)
    const kicked = await channel.send(message(), String(GROUP_CHAT))
    assert.isTrue(kicked.status === 'failed' && kicked.stopTarget)
    assert.include(kicked.status === 'failed' ? kicked.error : '', 'kicked')
    assert.lengthOf(fake.accepted, 0)
  })

  test("400 chat not found: failed, the chat stopped, Telegram's description kept", async ({
    assert,
  }) => {
    const outcome = await channel.send(message(), '-100555')
    assert.deepEqual(outcome, {
      status: 'failed',
      error: 'Bad Request: chat not found',
      stopTarget: true,
    })
    const byName = await channel.send(message(), '@no_such_channel')
    assert.isTrue(byName.status === 'failed' && byName.stopTarget)
  })

  test('another 400 (entities, in a 400 or in an HTTP 200): failed for this message only', async ({
    assert,
  }) => {
    fake.inject(
      {
        status: 400,
        body: {
          ok: false,
          error_code: 400,
          description:
            'Bad Request: can\'t parse entities: Unsupported start tag "x" at byte offset 3',
        },
      },
      'error_in_200'
    )
    for (let attempt = 0; attempt < 2; attempt++) {
      const outcome = await channel.send(message(), String(OPS_CHAT))
      assert.equal(outcome.status, 'failed')
      assert.isNotTrue(outcome.status === 'failed' && outcome.stopTarget)
      assert.include(outcome.status === 'failed' ? outcome.error : '', "can't parse entities")
    }
    // The next message goes.
    assert.deepEqual(await channel.send(message(), String(OPS_CHAT)), { status: 'delivered' })
  })

  test('5xx, an HTML error page, a body that is not JSON, a timeout, a closed port: retry', async ({
    assert,
  }) => {
    fake.inject('html_502', 'json_500', 'not_json_200')
    const bad = await channel.send(message(), String(OPS_CHAT))
    assert.equal(bad.status, 'retry')
    assert.include(bad.status === 'retry' ? bad.error : '', 'HTTP 502')
    const serverError = await channel.send(message(), String(OPS_CHAT))
    assert.equal(serverError.status, 'retry')
    assert.include(serverError.status === 'retry' ? serverError.error : '', 'Internal Server Error')
    const notJson = await channel.send(message(), String(OPS_CHAT))
    assert.equal(notJson.status, 'retry')
    assert.include(notJson.status === 'retry' ? notJson.error : '', 'not a Bot API answer')

    botApiTiming.requestTimeoutMs = 300
    fake.inject('hang')
    const started = Date.now()
    const hung = await channel.send(message(), String(OPS_CHAT))
    assert.equal(hung.status, 'retry')
    assert.include(hung.status === 'retry' ? hung.error : '', 'no answer within')
    assert.isBelow(Date.now() - started, 3000)

    await settings.set('notify.telegram.api_url', 'http://127.0.0.1:9')
    const refused = await channel.send(message(), String(OPS_CHAT))
    assert.equal(refused.status, 'retry')
    assert.lengthOf(fake.accepted, 0)
  })

  test('the bot token never appears in an error', async ({ assert }) => {
    const errors: string[] = []
    const record = async () => {
      const outcome = await channel.send(message(), String(OPS_CHAT))
      assert.notEqual(outcome.status, 'delivered')
      if (outcome.status !== 'delivered') errors.push(outcome.error)
    }
    // A proxy's page quoting the request path /bot<token>/sendMessage.
    fake.inject('echo_url_502')
    await record()
    assert.include(errors[0], '/bot<token>/sendMessage')
    // The token refused (revoked): retried, with a hint.
    fake.token = '987654321:AAEanotherTokenThatTheFakeExpects_xyz'
    await record()
    assert.include(errors[1], 'Unauthorized')
    assert.include(errors[1], 'notify.telegram.bot_token')
    fake.token = FAKE_BOT_TOKEN
    await settings.set('notify.telegram.api_url', 'http://127.0.0.1:9')
    await record()
    for (const error of errors) {
      assert.notInclude(error, TOKEN_SECRET)
      assert.notInclude(error, FAKE_BOT_TOKEN.split(':')[0] + ':')
    }
  })
})

test.group('Telegram commands', (group) => {
  const fake = new FakeTelegram()
  const saved = { ...pollerTiming }
  group.setup(async () => {
    await fake.start()
    Object.assign(pollerTiming, {
      pollSeconds: 1,
      requestMarginMs: 2000,
      conflictBackoffMs: 3000,
      backoffMs: 50,
      maxBackoffMs: 200,
    })
    return async () => {
      Object.assign(pollerTiming, saved)
      await fake.stop()
    }
  })
  group.each.setup(async () => {
    await stopTelegramCommands()
    await resetDatabase()
    ensureTelegramSettings()
    fake.reset()
    fake.addChat({ id: OPS_CHAT, type: 'private' })
    fake.addChat({ id: STRANGER_CHAT, type: 'private' })
    await prepareLifecycle()
    await configure(fake)
    return () => stopTelegramCommands()
  })

  /** Sends `text` from `chat` and waits for the bot's next answer there. */
  async function ask(text: string, chat = OPS_CHAT): Promise<string> {
    const before = fake.messagesTo(chat).length
    fake.queueMessage(chat, text)
    await waitFor(() => fake.messagesTo(chat).length > before, `an answer to ${text}`)
    return fake.messagesTo(chat)[before].text
  }

  test('the poller runs only when enabled, with commands on and a token', async ({ assert }) => {
    await settings.set('notify.telegram.commands', 'false')
    await ensureTelegramCommands()
    assert.isFalse(telegramCommandsRunning())
    await settings.set('notify.telegram.commands', 'true')
    await settings.set('notify.telegram.enabled', 'false')
    await ensureTelegramCommands()
    assert.isFalse(telegramCommandsRunning())
    await settings.set('notify.telegram.enabled', 'true')
    await ensureTelegramCommands()
    assert.isTrue(telegramCommandsRunning())
    assert.include(await ask('/help'), '/status')
    // Turned off: the next run of the job stops it.
    await settings.set('notify.telegram.commands', 'false')
    await ensureTelegramCommands()
    assert.isFalse(telegramCommandsRunning())
  })

  test("/status: scanners, the callback outbox and today's orders", async ({ client, assert }) => {
    const now = Date.now()
    await db.table('chain_cursors').insert({
      network: FAKE_NETWORK,
      cursor: '{}',
      caught_up: true,
      last_scan_at: now - 5000,
      last_error: '',
      head_height: '12350',
      scanned_height: '12345',
      heights_at: now - 5000,
      updated_at: now,
    })
    const orders = []
    for (const amount of [10, 20, 30]) orders.push(await newOrder(client, { amount }))
    for (const order of orders.slice(0, 2))
      await paymentService.markPaid(order.id, {
        reference: `tx-${order.tradeId}`,
        source: 'scanner',
      })
    await db.from('callbacks').where('order_id', orders[1].id).update({ status: 'failed' })
    const paid = await Order.query().whereIn('id', [orders[0].id, orders[1].id])
    const paidSum = paid.reduce((sum, order) => sum + Number(order.actualAmount), 0)

    await ensureTelegramCommands()
    const answer = await ask('/status')
    assert.include(answer, `${FAKE_NETWORK}: block 12345 (head 12350, 5 behind)`)
    assert.include(answer, '1 pending')
    assert.include(answer, '1 failed')
    assert.include(answer, '3 created, 2 paid')
    assert.match(answer, /Paid: [\d.,]+ USDT/)
    const shown = /Paid: ([\d.,]+) USDT/.exec(answer)![1].replace(/,/g, '')
    assert.closeTo(Number(shown), paidSum, 1e-9)
  })

  test('/order by trade id and by merchant order id; "not found" otherwise', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { order_id: 'shop-4711', amount: 42 })
    await paymentService.markPaid(order.id, { reference: `tx-${order.tradeId}`, source: 'scanner' })
    await order.refresh()
    await ensureTelegramCommands()

    const byTrade = await ask(`/order ${order.tradeId}`)
    assert.include(byTrade, `Order ${order.tradeId}: paid`)
    assert.include(byTrade, 'Merchant order: shop-4711')
    assert.include(byTrade, `on ${FAKE_NETWORK}`)
    assert.include(byTrade, 'USDT')
    assert.include(byTrade, 'Callback: pending')
    assert.notInclude(byTrade, 'Paid: —')

    const byOrderId = await ask('/order@gateway_test_bot shop-4711')
    assert.include(byOrderId, `Order ${order.tradeId}: paid`)

    assert.include(await ask('/order nope-<b>'), 'not found')
    assert.include(await ask('/order'), 'Usage')
  })

  test('/mute sets notify.telegram.muted_until; /mute 0 unmutes; out of range refused', async ({
    assert,
  }) => {
    await ensureTelegramCommands()
    const before = Date.now()
    assert.include(await ask('/mute 30'), 'Muted until')
    const until = Number(await settings.read('notify.telegram.muted_until'))
    assert.isAtLeast(until, before + 30 * 60_000)
    assert.isAtMost(until, Date.now() + 30 * 60_000)

    assert.include(await ask('/mute 5000'), 'At most 1440')
    assert.equal(Number(await settings.read('notify.telegram.muted_until')), until)

    assert.include(await ask('/mute 0'), 'Unmuted')
    assert.equal(Number(await settings.read('notify.telegram.muted_until')), 0)
  })

  test('a chat not allow-listed gets no answer; nor does a command for another bot', async ({
    assert,
  }) => {
    await ensureTelegramCommands()
    fake.queueMessage(STRANGER_CHAT, '/status')
    fake.queueMessage(STRANGER_CHAT, '/mute 60')
    fake.queueMessage(OPS_CHAT, '/status@some_other_bot')
    // Handled in order: once this one is answered, those were seen.
    assert.include(await ask('/help'), '/order')
    assert.lengthOf(fake.messagesTo(STRANGER_CHAT), 0)
    assert.lengthOf(fake.messagesTo(OPS_CHAT), 1)
    assert.equal(Number(await settings.read('notify.telegram.muted_until')), 0)
  })

  test('the offset is stored: a restart does not answer an update twice', async ({ assert }) => {
    await ensureTelegramCommands()
    const updateId = fake.queueMessage(OPS_CHAT, '/help')
    await waitFor(() => fake.messagesTo(OPS_CHAT).length === 1, 'the answer')
    const row = await db.from('settings').where('key', 'notify.telegram.update_offset').first()
    assert.equal(Number(row?.value), updateId + 1)
    await stopTelegramCommands()

    // Telegram forgets that it was confirmed (the process stopped before its next getUpdates).
    fake.unconfirm()
    assert.equal(fake.pendingUpdates, 1)
    await ensureTelegramCommands()
    assert.include(await ask('/mute 1'), 'Muted')
    const answers = fake.messagesTo(OPS_CHAT).map((sent) => sent.text)
    assert.lengthOf(answers, 2)
    assert.include(answers[0], '/status')
    assert.include(answers[1], 'Muted')
    // Every poll after the restart asked from the stored offset on.
    const restartPoll = fake.polls.find((poll) => poll.offset >= updateId + 1)
    assert.exists(restartPoll)
  })

  test('an update another process claimed first (it polled between our getUpdates and our claim) is not answered again', async ({
    assert,
  }) => {
    await ensureTelegramCommands()
    const first = fake.queueMessage(OPS_CHAT, '/help')
    await waitFor(() => fake.messagesTo(OPS_CHAT).length === 1, 'the answer to /help')
    await waitFor(
      () => fake.pollHeld && fake.polls.at(-1)?.offset === first + 1,
      'the poller waiting for the next update'
    )
    // The other process got the next update too, claimed it and answered it: the stored offset is past it.
    await db
      .from('settings')
      .where('key', 'notify.telegram.update_offset')
      .update({ value: String(first + 2) })
    const taken = fake.queueMessage(OPS_CHAT, '/mute 1')
    assert.equal(taken, first + 1)
    // Ours gets it from its held poll, and leaves it: the next answer is to the next command.
    const answer = await ask('/status')
    assert.notInclude(answer, 'Muted')
    assert.include(answer, 'created')
    assert.lengthOf(fake.messagesTo(OPS_CHAT), 2)
    assert.equal(Number(await settings.read('notify.telegram.muted_until')), 0)
  })

  test('claims: of two processes claiming the same updates at once, one gets them', async ({
    assert,
  }) => {
    const updates = [{ update_id: 41 }, { update_id: 42 }]
    const [one, two] = await Promise.all([claimUpdates(updates), claimUpdates(updates)])
    assert.sameMembers([one.length, two.length], [0, 2])
    const row = await db.from('settings').where('key', 'notify.telegram.update_offset').first()
    assert.equal(row.value, '43')
    // Later updates only, once some are claimed; nothing moves back.
    assert.deepEqual(await claimUpdates([{ update_id: 42 }, { update_id: 43 }]), [
      { update_id: 43 },
    ])
    assert.deepEqual(await claimUpdates([{ update_id: 40 }]), [])
    assert.equal(
      (await db.from('settings').where('key', 'notify.telegram.update_offset').first()).value,
      '44'
    )
  })

  test('409 Conflict (another process polls the bot): steps back instead of fighting', async ({
    assert,
  }) => {
    // Our polls last longer than the other's here, so that ours is surely the one held when the
    // other comes (with 1 s polls, ours could end and poll again first, however busy the machine).
    pollerTiming.pollSeconds = 5
    await ensureTelegramCommands()
    await waitFor(
      () => fake.pollHeld && fake.polls.at(-1)?.timeout === 5,
      'the poller waiting in a 5 s getUpdates'
    )
    // Another instance polls: Telegram ends our poll with 409.
    const other = fetch(`${fake.url}/bot${FAKE_BOT_TOKEN}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 2 }),
    }).then((response) => response.json() as Promise<{ ok: boolean; error_code?: number }>)
    const otherAnswer = await other
    // The other's poll ran its full course: ours did not come back to end it.
    assert.deepEqual(otherAnswer, { ok: true, result: [] } as any)
    assert.isTrue(fake.polls.some((poll) => poll.outcome === 'conflict'))
    assert.isTrue(telegramCommandsRunning())
    // And the poller comes back after its pause.
    assert.include(await ask('/help'), '/status')
    pollerTiming.pollSeconds = 1
  })
})
