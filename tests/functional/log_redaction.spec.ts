import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import paymentService from '#services/payment_service'
import { redactLogFields } from '#support/http/redaction'
import { newOrder } from '#tests/helpers/orders'
import { merchantForGroup } from '#tests/helpers/merchant_group'
import { runAce } from '#tests/helpers/processes'

type LogLine = {
  level: number
  msg: string
  url?: string
  error?: string
  [field: string]: unknown
}

function jsonLines(stdout: string): LogLine[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
}

test.group('Log lines carry no URL secrets', (group) => {
  const merchant = merchantForGroup(group)

  test("a real compat delivery's JSON log lines mask sign, tokens and user info", async ({
    client,
    assert,
  }) => {
    // The merchant's notify_url carries a password and a token of its own; the compat callback adds its sign.
    const notifyUrl =
      merchant.notifyUrl.replace('http://', 'http://shop:hunter2-password@') +
      '?token=merchant-token-42&shop=7'
    merchant.reset([
      { status: 500, body: 'busy' },
      { status: 200, body: 'success' },
    ])
    const order = await newOrder(client, {
      notify_url: notifyUrl,
      payment_type: 'Compat',
      pid: '1000',
    })
    await paymentService.markPaid(order.id, { reference: `tx-${order.tradeId}`, source: 'scanner' })

    const lines: LogLine[] = []
    for (let run = 0; run < 2; run++) {
      // The retry is due at once (not after its backoff).
      if (run === 1)
        await db
          .from('callbacks')
          .where('order_id', order.id)
          .update({ next_attempt_at: Date.now() - 1000 })
      // The worker's command, as production runs it: JSON lines on stdout.
      const result = await runAce(['callbacks:deliver'], { LOG_LEVEL: 'info' })
      assert.equal(result.code, 0, result.stderr + result.stdout)
      lines.push(...jsonLines(result.stdout))
    }
    assert.lengthOf(merchant.requests, 2)
    const sent = new URL(merchant.requests[1].url, 'http://merchant').searchParams
    const sign = sent.get('sign')!
    assert.match(sign, /^[0-9a-f]{32}$/)

    const delivery = lines.filter((line) => /merchant callback/.test(line.msg))
    assert.deepEqual(
      delivery.map((line) => line.msg),
      ['merchant callback failed; will retry', 'merchant callback delivered']
    )
    for (const line of delivery) {
      const url = new URL(line.url!)
      assert.equal(url.searchParams.get('sign'), '***')
      assert.equal(url.searchParams.get('token'), '***')
      assert.equal(url.searchParams.get('shop'), '7')
      assert.equal(url.searchParams.get('trade_no'), order.tradeId)
      assert.equal(url.username, '***')
      assert.equal(url.password, '')
    }
    const everything = lines.map((line) => JSON.stringify(line)).join('\n')
    assert.notInclude(everything, sign)
    assert.notInclude(everything, 'hunter2-password')
    assert.notInclude(everything, 'merchant-token-42')
  }).timeout(120_000)

  test('fields are redacted however deep; lines without a URL are left as they are', ({
    assert,
  }) => {
    const fields = {
      a: { b: [{ c: 'see https://x.example/cb?signature=abc123&key=k1&id=9 now' }] },
      n: 3,
    }
    assert.deepEqual(redactLogFields(fields), {
      a: { b: [{ c: 'see https://x.example/cb?signature=***&key=***&id=9 now' }] },
      n: 3,
    })
    assert.equal(fields.a.b[0].c, 'see https://x.example/cb?signature=abc123&key=k1&id=9 now')
    const plain = { trade_id: 'T1', attempt: 2, note: 'no address here' }
    assert.strictEqual(redactLogFields(plain), plain)
  })
})
