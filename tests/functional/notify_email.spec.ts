import { test } from '@japa/runner'
import { createServer, type Server } from 'node:net'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { SettingValueError } from '#settings/setting_types'
import type { NotificationMessage } from '#notifications/notification_channel'
import emailPlugin from '#plugins/email/plugin'
import { EmailChannel } from '#plugins/email/email_channel'
import { resetDatabase } from '#tests/helpers/database'
import { SmtpTestServer } from '#tests/helpers/smtp_server'

const RECIPIENTS = ['ops@example.com', 'cfo@example.com']

/** The plugin's settings, known to the settings service even before config/plugins.ts lists it. */
function ensureEmailSettings() {
  try {
    settings.definition('notify.email.host')
  } catch {
    settings.addDefinitions('email', emailPlugin.settings, true)
  }
}

/** The channel pointed at `server` (STARTTLS, its credentials, its self-signed certificate accepted). */
async function configure(server: SmtpTestServer, overrides: Record<string, string> = {}) {
  await settings.setMany({
    'notify.email.host': '127.0.0.1',
    'notify.email.port': String(server.port),
    'notify.email.tls': server.tls,
    'notify.email.tls_reject_unauthorized': 'false',
    'notify.email.user': server.user,
    'notify.email.password': server.password,
    'notify.email.from': 'Pay Gateway <alerts@gateway.example>',
    'notify.email.recipients': RECIPIENTS.join(', '),
    ...overrides,
  })
}

let nextEventId = 1

function message(overrides: Partial<NotificationMessage> = {}): NotificationMessage {
  const eventId = nextEventId++
  return {
    idempotencyKey: `${eventId}:email:${RECIPIENTS.join(',')}`,
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

test.group('E-mail channel: settings, targets and problem', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    ensureEmailSettings()
  })

  test('the plugin brings the channel and its settings (rules included)', ({ assert }) => {
    assert.equal(emailPlugin.name, 'email')
    assert.deepEqual(
      emailPlugin.notificationChannels.map((channel) => channel.name),
      ['email']
    )
    for (const key of [
      'notify.email.enabled',
      'notify.email.events',
      'notify.email.min_severity',
      'notify.email.host',
      'notify.email.port',
      'notify.email.tls',
      'notify.email.password',
      'notify.email.recipients',
      'notify.email.digest_minutes',
    ])
      assert.include(Object.keys(emailPlugin.settings), key)
    assert.isTrue(emailPlugin.settings['notify.email.password'].secret)
    assert.equal(emailPlugin.settings['notify.email.port'].default, 587)
    assert.equal(emailPlugin.settings['notify.email.tls'].default, 'starttls')
    assert.equal(emailPlugin.settings['notify.email.digest_minutes'].default, 0)
    assert.isTrue(emailPlugin.settings['notify.email.tls_reject_unauthorized'].default)
  })

  test('not configured: no target, and the problem names what is missing', async ({ assert }) => {
    const channel = new EmailChannel()
    assert.deepEqual(await channel.targets(), [])
    const problem = await channel.problem()
    for (const key of ['notify.email.host', 'notify.email.from', 'notify.email.recipients'])
      assert.include(problem, key)

    await settings.setMany({
      'notify.email.host': 'smtp.example.com',
      'notify.email.from': 'alerts@gateway.example',
      'notify.email.recipients': ' ops@example.com , cfo@example.com,ops@example.com',
    })
    assert.equal(await channel.problem(), '')
    // One target: one message to every recipient.
    assert.deepEqual(await channel.targets(), ['ops@example.com,cfo@example.com'])

    await settings.set('notify.email.user', 'gateway')
    assert.include(await channel.problem(), 'notify.email.password')
  })

  test('addresses are checked when set; the password is stored encrypted', async ({ assert }) => {
    for (const [key, raw] of [
      ['notify.email.recipients', 'ops@example.com, not-an-address'],
      ['notify.email.recipients', 'ops@example.com\r\nBcc: evil@example.com'],
      ['notify.email.from', 'Gateway <alerts@example.com>\r\nBcc: evil@example.com'],
      ['notify.email.from', 'Gateway'],
      ['notify.email.tls', 'ssl'],
      ['notify.email.port', '0'],
    ]) {
      const refused = await settings.set(key, raw).then(
        () => null,
        (error: Error) => error
      )
      assert.instanceOf(refused, SettingValueError, `${key} = ${JSON.stringify(raw)}`)
    }

    await settings.set('notify.email.from', 'Pay Gateway <alerts@gateway.example>')
    await settings.set('notify.email.from', 'root@localhost')
    await settings.set('notify.email.password', 'hunter2-smtp-secret')
    const row = await db.from('settings').where('key', 'notify.email.password').firstOrFail()
    assert.notInclude(row.value, 'hunter2-smtp-secret')
    assert.match(row.value, /^app\.v1:/)
  })

  test('digest minutes come from notify.email.digest_minutes', async ({ assert }) => {
    const channel = new EmailChannel()
    assert.equal(await channel.digest.minutes(), 0)
    await settings.set('notify.email.digest_minutes', '15')
    assert.equal(await channel.digest.minutes(), 15)
  })
})

test.group('E-mail channel: sending through a real SMTP server', (group) => {
  const server = new SmtpTestServer()
  let channel: EmailChannel
  group.setup(async () => {
    await server.start()
    return () => server.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    ensureEmailSettings()
    if (!server.running) await server.up()
    server.reset()
    channel = new EmailChannel()
    await configure(server)
    return () => channel.close()
  })

  test('delivered: one message to all recipients, over STARTTLS with the login, text and HTML', async ({
    assert,
  }) => {
    const sent = message()
    const outcome = await channel.send(sent, (await channel.targets())[0])
    assert.deepEqual(outcome, { status: 'delivered' })

    const [mail] = await server.waitForMessages(1)
    assert.lengthOf(server.messages, 1)
    assert.isTrue(mail.secure, 'the session was encrypted (STARTTLS)')
    assert.equal(mail.user, server.user)
    assert.equal(mail.from, 'alerts@gateway.example')
    assert.deepEqual(mail.to, RECIPIENTS)
    const parsed = mail.parsed
    assert.equal(parsed.subject, `[info] ${sent.title}`)
    assert.deepEqual(parsed.from?.value, [
      { name: 'Pay Gateway', address: 'alerts@gateway.example' },
    ])
    const to = Array.isArray(parsed.to) ? parsed.to : [parsed.to!]
    assert.deepEqual(
      to.flatMap((address) => address.value.map((entry) => entry.address)),
      RECIPIENTS
    )
    assert.equal(parsed.headers.get('x-gateway-event'), 'order.paid')
    assert.include(parsed.text!, sent.title)
    assert.include(parsed.text!, 'Trade ID: T-42')
    assert.include(parsed.text!, 'Order: https://gateway.example/admin/orders/42')
    assert.include(parsed.text!, '2025-01-02T03:04:05Z')
    assert.isString(parsed.html)
    assert.include(parsed.html as string, 'Trade ID: T-42')
    assert.include(
      parsed.html as string,
      '<a href="https://gateway.example/admin/orders/42">Order</a>'
    )
  })

  test('hostile values are escaped in the HTML and cannot add headers', async ({ assert }) => {
    const sent = message({
      title: 'Paid <script>alert(1)</script> & "more"\r\nBcc: evil@example.com',
      lines: ['<img src=x onerror=alert(2)>', 'Memo: </p><b>bold</b>'],
      links: [
        { label: '<i>click</i>', url: 'javascript:alert(3)' },
        { label: 'ok', url: 'https://gateway.example/?a=1&b="2"' },
      ],
      event: 'order.paid\r\nX-Injected: yes',
    })
    assert.deepEqual(await channel.send(sent, RECIPIENTS.join(',')), { status: 'delivered' })
    const [mail] = await server.waitForMessages(1)
    const html = mail.parsed.html as string
    assert.notInclude(html, '<script>')
    assert.include(html, '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;more&quot;')
    assert.notInclude(html, '<img')
    assert.include(html, '&lt;img src=x onerror=alert(2)&gt;')
    assert.notInclude(html, '<b>bold</b>')
    assert.notInclude(html, '<i>click</i>')
    assert.notInclude(html, 'href="javascript:')
    assert.include(html, 'href="https://gateway.example/?a=1&amp;b=%222%22"')
    // Nobody else got it, and no header came from the values.
    assert.deepEqual(mail.to, RECIPIENTS)
    assert.isFalse(mail.parsed.headers.has('bcc'))
    assert.isFalse(mail.parsed.headers.has('x-injected'))
    assert.notMatch(mail.raw, /^Bcc:/im)
    assert.notMatch(mail.raw, /^X-Injected:/im)
    assert.include(mail.parsed.subject!, 'Bcc: evil@example.com') // kept, on the subject's one line
  })

  test('the Message-ID comes from the idempotency key: the same across retries, another for another delivery', async ({
    assert,
  }) => {
    const sent = message()
    const target = RECIPIENTS.join(',')
    assert.equal((await channel.send(sent, target)).status, 'delivered')
    // A retry by another process (a new channel, a new connection).
    const other = new EmailChannel()
    try {
      assert.equal((await other.send(sent, target)).status, 'delivered')
    } finally {
      await other.close()
    }
    assert.equal((await channel.send(message(), target)).status, 'delivered')
    const mails = await server.waitForMessages(3)
    const ids = mails.map((mail) => mail.parsed.messageId)
    assert.match(ids[0]!, /^<notify\.[0-9a-f]{32}@gateway\.example>$/)
    assert.equal(ids[1], ids[0])
    assert.notEqual(ids[2], ids[0])
  })

  test('wrong password: failed, not retried, with the hint and without the password', async ({
    assert,
  }) => {
    const wrong = 'Wr0ng-pa55word-xyz'
    await settings.set('notify.email.password', wrong)
    // A chatty server that repeats what it was sent.
    server.authFailureReply = (user, password) => `5.7.8 ${user}/${password} rejected`
    const outcome = await channel.send(message(), RECIPIENTS.join(','))
    assert.equal(outcome.status, 'failed')
    const error = (outcome as { error: string }).error
    assert.include(error, '535')
    assert.include(error, 'notify.email.user')
    assert.include(error, 'notify.email.password')
    assert.notInclude(error, wrong)
    assert.deepEqual(server.logins, [{ user: server.user, accepted: false }])
    assert.lengthOf(server.messages, 0)
  })

  test('a 4xx from the server: retry, nothing delivered; a 5xx recipient refusal: failed', async ({
    assert,
  }) => {
    server.rcptReply = { code: 451, message: '4.3.0 Mailbox temporarily unavailable' }
    const deferred = await channel.send(message(), RECIPIENTS.join(','))
    assert.equal(deferred.status, 'retry')
    assert.include((deferred as { error: string }).error, '451')

    server.rcptReply = { code: 550, message: '5.1.1 No such user' }
    const refused = await channel.send(message(), RECIPIENTS.join(','))
    assert.equal(refused.status, 'failed')
    assert.include((refused as { error: string }).error, '550')
    assert.lengthOf(server.messages, 0)

    server.rcptReply = null
    assert.equal((await channel.send(message(), RECIPIENTS.join(','))).status, 'delivered')
    await server.waitForMessages(1)
  })

  test('server down: retry; back on the same port: delivered', async ({ assert }) => {
    const sent = message()
    await server.down()
    const outcome = await channel.send(sent, RECIPIENTS.join(','))
    assert.equal(outcome.status, 'retry')
    assert.include((outcome as { error: string }).error, `127.0.0.1:${server.port}`)
    assert.lengthOf(server.messages, 0)

    await server.up()
    assert.equal((await channel.send(sent, RECIPIENTS.join(','))).status, 'delivered')
    const [mail] = await server.waitForMessages(1)
    assert.equal(mail.parsed.subject, `[info] ${sent.title}`)
  })

  test('a settings change takes effect on the next send (the transport is rebuilt)', async ({
    assert,
  }) => {
    const second = new SmtpTestServer({ auth: { user: 'other', password: 'other-Pa55' } })
    await second.start()
    try {
      assert.equal((await channel.send(message(), RECIPIENTS.join(','))).status, 'delivered')
      await configure(second)
      assert.equal((await channel.send(message(), RECIPIENTS.join(','))).status, 'delivered')
      await second.waitForMessages(1)
      assert.lengthOf(server.messages, 1)
      assert.lengthOf(second.messages, 1)
      assert.equal(second.messages[0].user, 'other')
    } finally {
      await second.stop()
    }
  })

  test('an untrusted certificate is refused while tls_reject_unauthorized is on', async ({
    assert,
  }) => {
    await settings.set('notify.email.tls_reject_unauthorized', 'true')
    const outcome = await channel.send(message(), RECIPIENTS.join(','))
    assert.equal(outcome.status, 'failed')
    const error = (outcome as { error: string }).error
    assert.include(error, 'certificate')
    assert.include(error, 'notify.email.tls_reject_unauthorized')
    assert.deepEqual(server.logins, [], 'the password was not sent')
    assert.lengthOf(server.messages, 0)
  })

  test('digest: one message listing every event, the most severe first', async ({ assert }) => {
    const messages = [
      message({ title: 'Order paid A' }),
      message({ title: 'Order paid B' }),
      message({
        event: 'callback.failing',
        severity: 'critical',
        title: 'Callbacks failing for shop-7 <x>',
      }),
      message({ event: 'callback.failing', severity: 'warning', title: 'Callback slow' }),
      message({ title: 'Order paid C' }),
    ]
    const target = RECIPIENTS.join(',')
    assert.deepEqual(await channel.digest.send(messages, target), { status: 'delivered' })
    const [mail] = await server.waitForMessages(1)
    assert.lengthOf(server.messages, 1)
    assert.deepEqual(mail.to, RECIPIENTS)
    assert.equal(
      mail.parsed.subject,
      '[gateway] 5 events (1 critical): 3 order.paid, 2 callback.failing'
    )
    const text = mail.parsed.text!
    const positions = [
      'Callbacks failing for shop-7 <x>',
      'Callback slow',
      'Order paid A',
      'Order paid B',
      'Order paid C',
    ].map((title) => text.indexOf(title))
    assert.notInclude(positions, -1)
    assert.deepEqual(
      positions,
      [...positions].sort((a, b) => a - b),
      'critical, then warning, then info (oldest first)'
    )
    const html = mail.parsed.html as string
    assert.include(html, 'Callbacks failing for shop-7 &lt;x&gt;')
    assert.isBelow(html.indexOf('Callbacks failing'), html.indexOf('Order paid A'))

    // A retry of the same digest keeps its Message-ID.
    assert.equal((await channel.digest.send(messages, target)).status, 'delivered')
    await server.waitForMessages(2)
    assert.equal(server.messages[1].parsed.messageId, mail.parsed.messageId)
  })
})

test.group('E-mail channel: TLS modes', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    ensureEmailSettings()
  })

  test('starttls against a server without STARTTLS: an error, nothing sent in plain text', async ({
    assert,
  }) => {
    const plain = new SmtpTestServer({ tls: 'none' })
    await plain.start()
    const channel = new EmailChannel()
    try {
      await configure(plain, { 'notify.email.tls': 'starttls' })
      const outcome = await channel.send(message(), RECIPIENTS.join(','))
      assert.equal(outcome.status, 'failed')
      assert.include((outcome as { error: string }).error, 'STARTTLS')
      assert.lengthOf(plain.messages, 0)
      assert.deepEqual(plain.logins, [], 'the password was not sent in plain text')

      // none: the same server takes it, in plain text (a local relay).
      await settings.set('notify.email.tls', 'none')
      assert.equal((await channel.send(message(), RECIPIENTS.join(','))).status, 'delivered')
      const [mail] = await plain.waitForMessages(1)
      assert.isFalse(mail.secure)
    } finally {
      await channel.close()
      await plain.stop()
    }
  })

  test('tls: TLS from the first byte (port 465 style)', async ({ assert }) => {
    const implicit = new SmtpTestServer({ tls: 'tls' })
    await implicit.start()
    const channel = new EmailChannel()
    try {
      await configure(implicit)
      assert.equal((await channel.send(message(), RECIPIENTS.join(','))).status, 'delivered')
      const [mail] = await implicit.waitForMessages(1)
      assert.isTrue(mail.secure)
      assert.equal(mail.user, implicit.user)
    } finally {
      await channel.close()
      await implicit.stop()
    }
  })

  test('a server that hangs up or answers 421 at the greeting: retry', async ({ assert }) => {
    const greetings = [
      { greeting: '', says: 'Connection closed' },
      { greeting: '421 4.3.2 Service not available, closing channel\r\n', says: '421 4.3.2' },
    ]
    for (const { greeting, says } of greetings) {
      const tcp: Server = createServer((socket) => {
        if (greeting === '') socket.destroy()
        else socket.end(greeting)
      })
      await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve))
      const channel = new EmailChannel()
      try {
        await settings.setMany({
          'notify.email.host': '127.0.0.1',
          'notify.email.port': String((tcp.address() as { port: number }).port),
          'notify.email.from': 'alerts@gateway.example',
          'notify.email.recipients': RECIPIENTS.join(','),
        })
        const outcome = await channel.send(message(), RECIPIENTS.join(','))
        assert.equal(outcome.status, 'retry', JSON.stringify(outcome))
        assert.include((outcome as { error: string }).error, says)
      } finally {
        await channel.close()
        await new Promise<void>((resolve) => tcp.close(() => resolve()))
      }
    }
  })
})
