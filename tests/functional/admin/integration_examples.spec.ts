import { compatIntegration } from '#plugins/compat/compat_integration'
import { test } from '@japa/runner'
import Order, { OrderStatus } from '#models/order'
import ApiKey from '#models/api_key'
import settings from '#settings/settings_service'
import apiKeyAdmin from '#services/operators/api_key_admin'
import integrationExamples, {
  EXAMPLE_NOTIFY_URL,
  SECRET_VARIABLE,
  renderGuide,
  type IntegrationExample,
  type IntegrationGuide,
} from '#services/admin/integration_examples'
import testCallbackSender from '#services/admin/test_callback'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import {
  hasProgram,
  interpreter,
  runProgram,
  scratchDirectory,
  startListeningProgram,
} from '#tests/helpers/example_programs'

/**
 * The examples of the integration page are run as a merchant would run
 * them, against this gateway (APP_URL, the test server): an order must be
 * created for the key, and the callback receivers must accept a callback
 * the gateway signed. PHP examples need php-cli (`.ci/run` installs it): without
 * it they fail, naming what is missing, rather than passing unseen.
 */
const PHP_PRESENT = hasProgram('php')
const PHP_MISSING_REASON = 'php is not installed (apt-get install php-cli); CI must have it'

function requirePhp(example: { id: string }) {
  if (example.id === 'php' && !PHP_PRESENT) throw new Error(PHP_MISSING_REASON)
}

async function newKey(input: { ips?: string[] } = {}) {
  const admin = apiKeyAdmin
  const apiKey = await admin.create({ ips: input.ips })
  return { apiKey, secret: apiKey.signingSecret() }
}

async function guideFor(pid: string): Promise<IntegrationGuide> {
  return integrationExamples.forKey(pid)
}

async function runCreateExample(example: IntegrationExample, secret: string) {
  requirePhp(example)
  const scratch = await scratchDirectory()
  try {
    const file = await scratch.write(example.filename, example.code)
    return await runProgram(
      interpreter(example.id),
      [file],
      { [SECRET_VARIABLE]: secret },
      { cwd: scratch.path }
    )
  } finally {
    await scratch.cleanup()
  }
}

/** The create response the example printed (its last line of JSON). */
function printedResponse(stdout: string) {
  const line = stdout.trim().split('\n').at(-1) ?? ''
  return JSON.parse(line)
}

test.group('Integration examples: creating an order', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await settings.set('rate_limit.create_per_minute', '0')
  })

  for (const id of ['shell', 'php', 'node'] as const) {
    test(`the ${id} example creates an order for the key, on the first payable asset`, async ({
      assert,
    }) => {
      await makeTronPayable()
      const { apiKey, secret } = await newKey()
      const guide = await guideFor(apiKey.pid)
      assert.deepEqual(guide.asset, { token: 'USDT', network: 'tron' })
      const example = guide.createExamples.find((candidate) => candidate.id === id)!
      assert.notInclude(example.code, secret)

      const run = await runCreateExample(example, secret)
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
      const response = printedResponse(run.stdout)
      assert.equal(response.status_code, 200)

      const order = await Order.findByOrFail('trade_id', response.data.trade_id)
      assert.equal(order.apiKeyId, apiKey.id)
      assert.equal(order.pid, apiKey.pid)
      assert.equal(order.status, OrderStatus.WAITING)
      assert.deepEqual(
        [order.token, order.network, order.currency, order.amount],
        ['USDT', 'tron', 'CNY', '10']
      )
      assert.equal(order.name, 'Example order')
      assert.equal(order.notifyUrl, EXAMPLE_NOTIFY_URL)
      assert.match(order.orderId, /^order-\d+-\d+$/)
      assert.equal(
        response.data.payment_url,
        `${process.env.APP_URL}/pay/checkout-counter/${order.tradeId}`
      )
    })

    test(`the ${id} example creates a placeholder order when nothing is payable yet`, async ({
      assert,
    }) => {
      const { apiKey, secret } = await newKey()
      const guide = await guideFor(apiKey.pid)
      assert.isNull(guide.asset)
      const run = await runCreateExample(
        guide.createExamples.find((candidate) => candidate.id === id)!,
        secret
      )
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
      const order = await Order.findByOrFail('trade_id', printedResponse(run.stdout).data.trade_id)
      assert.equal(order.status, OrderStatus.SELECTING)
      assert.equal(order.apiKeyId, apiKey.id)
    })

    test(`the ${id} example with a wrong secret is refused (401), exits non-zero and creates nothing`, async ({
      assert,
    }) => {
      const { apiKey } = await newKey()
      const guide = await guideFor(apiKey.pid)
      const run = await runCreateExample(
        guide.createExamples.find((candidate) => candidate.id === id)!,
        'not-the-secret-0123456789abcdef'
      )
      assert.notEqual(run.code, 0)
      assert.include(run.stdout + run.stderr, '"status_code":401')
      assert.equal(await countRows('orders'), 0)
    })
  }

  test('without the secret variable an example stops before sending anything', async ({
    assert,
  }) => {
    const { apiKey } = await newKey()
    const guide = await guideFor(apiKey.pid)
    for (const example of guide.createExamples) {
      requirePhp(example)
      const scratch = await scratchDirectory()
      try {
        const file = await scratch.write(example.filename, example.code)
        const run = await runProgram(interpreter(example.id), [file], {}, { cwd: scratch.path })
        assert.notEqual(run.code, 0, example.id)
        assert.include(run.stderr, `${SECRET_VARIABLE}`, example.id)
      } finally {
        await scratch.cleanup()
      }
    }
    assert.equal(await countRows('orders'), 0)
  })

  test("the key's IP allow-list applies to the examples' requests", async ({ assert }) => {
    const { apiKey, secret } = await newKey({ ips: ['10.0.0.0/8'] })
    const example = (await guideFor(apiKey.pid)).createExamples.find(
      (candidate) => candidate.id === 'node'
    )!
    const refused = await runCreateExample(example, secret)
    assert.notEqual(refused.code, 0)
    assert.include(refused.stderr, '"status_code":401')

    await apiKeyAdmin.update(apiKey.pid, { ips: ['127.0.0.1', '::1'] })
    const accepted = await runCreateExample(example, secret)
    assert.equal(accepted.code, 0, accepted.stderr)
    assert.equal(await countRows('orders', { api_key_id: apiKey.id }), 1)
    assert.isNotNull((await ApiKey.findByOrFail('pid', apiKey.pid)).lastUsedAt)
  })
})

test.group('Integration examples: what the page shows', (group) => {
  group.each.setup(() => resetDatabase())

  test('endpoints of the key, the compat EPay base URL only when its plugin is on', async ({
    assert,
  }) => {
    const guide = renderGuide({
      pid: '1001',
      baseUrl: 'https://pay.example/',
      asset: null,
      sections: [compatIntegration],
    })
    assert.equal(guide.baseUrl, 'https://pay.example')
    assert.deepEqual(
      guide.endpoints.map((endpoint) => endpoint.url),
      [
        'https://pay.example/payments/native/v1/order/create-transaction',
        'https://pay.example/payments/native/v1/order/query',
        'https://pay.example/payments/native/v1/config',
        'https://pay.example/payments/native/v1/openapi.json',
        // as an EPay SDK wants it: it appends submit.php, mapi.php and api.php
        'https://pay.example/payments/compat/v1/order/create-transaction/',
      ]
    )
    // The compat plugin's card: its own view, with what it computed for this key.
    assert.deepEqual(
      guide.sections.map((section) => [section.id, section.view]),
      [['compat', 'compat::admin/integration']]
    )
    const compat = guide.sections[0].data as {
      baseUrl: string
      submitUrl: string
      pidIsNumeric: boolean
      endpoints: { call: string; answers: string }[]
    }
    assert.equal(compat.baseUrl, 'https://pay.example/payments/compat/v1/order/create-transaction/')
    assert.equal(compat.submitUrl, `${compat.baseUrl}submit.php`)
    assert.isTrue(compat.pidIsNumeric)
    assert.deepEqual(
      compat.endpoints.map((endpoint) => endpoint.call),
      ['submit.php', 'mapi.php', 'api.php?act=order', 'api.php?act=orders', 'api.php?act=refund']
    )
    assert.match(compat.endpoints[1].answers, /code 1, trade_no, payurl .* qrcode/)
    assert.match(compat.endpoints[4].answers, /^Always code -1: refunds are not supported/)
    const off = renderGuide({
      pid: 'shop-7',
      baseUrl: 'https://pay.example',
      asset: null,
      sections: [],
    })
    assert.lengthOf(off.sections, 0)
    assert.lengthOf(off.endpoints, 4)
    assert.isFalse(
      renderGuide({
        pid: 'shop-7',
        baseUrl: 'https://pay.example',
        asset: null,
        sections: [compatIntegration],
      }).sections[0].data.pidIsNumeric
    )
  })

  test("moving from epusdt or BEpusdt: each change with this installation's URLs and the key's pid", async ({
    assert,
  }) => {
    const guide = renderGuide({
      pid: '2001',
      baseUrl: 'https://pay.example/',
      asset: null,
      sections: [],
    })
    assert.equal(
      guide.migration.createUrl,
      'https://pay.example/payments/native/v1/order/create-transaction'
    )
    assert.equal(guide.migration.queryUrl, 'https://pay.example/payments/native/v1/order/query')
    const steps = Object.fromEntries(guide.migration.steps.map((step) => [step.what, step]))
    assert.deepEqual(Object.keys(steps), [
      'Create URL',
      'pid',
      'currency',
      'Coin',
      'Signature',
      'Receiving address',
      'Expiry',
      'Callback check',
    ])
    assert.equal(steps['Create URL'].after, guide.migration.createUrl)
    assert.equal(steps['Create URL'].before, '{epusdt}/api/v1/order/create-transaction')
    assert.include(steps.pid.after, 'pid=2001')
    assert.include(steps.Signature.after, 'hash_hmac(sha256')
    assert.include(steps['Callback check'].after, 'an MD5 check refuses every callback')
  })

  test('a base URL with a quote stays one literal in every language', async ({ assert }) => {
    const guide = renderGuide({
      pid: '1001',
      baseUrl: "https://pay.example/it's",
      asset: null,
      sections: [],
    })
    const code = Object.fromEntries(
      guide.createExamples.map((example) => [example.id, example.code])
    )
    assert.include(code.shell, `GATEWAY_URL='https://pay.example/it'\\''s'`)
    assert.include(code.php, `$gatewayUrl = 'https://pay.example/it\\'s';`)
    assert.include(code.node, `const gatewayUrl = "https://pay.example/it's"`)
  })

  test('an unknown pid is refused', async ({ assert }) => {
    const examples = integrationExamples
    await assert.rejects(() => examples.forKey('4242'), 'No API key with pid 4242')
  })
})

test.group('Integration examples: receiving the callback', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await settings.set('callbacks.allow_private_targets', 'true')
  })

  for (const id of ['php', 'node'] as const) {
    test(`the ${id} receiver acknowledges a test callback signed by the gateway and refuses a forged one`, async ({
      assert,
    }) => {
      requirePhp({ id })
      const { apiKey, secret } = await newKey()
      const example = (await guideFor(apiKey.pid)).callbackExamples.find(
        (candidate) => candidate.id === id
      )!
      const scratch = await scratchDirectory()
      const file = await scratch.write(example.filename, example.code)
      const receiver = await startListeningProgram(
        interpreter(id),
        (port) => (id === 'php' ? ['-S', `127.0.0.1:${port}`, file] : [file]),
        (port) => ({ [SECRET_VARIABLE]: secret, PORT: String(port) }),
        { cwd: scratch.path }
      )
      try {
        const sender = testCallbackSender
        const result = await sender.send(apiKey.pid, `${receiver.url}/payment/notify`)
        assert.equal(
          result.outcome,
          'acknowledged',
          `${result.error} ${result.excerpt} ${receiver.output()}`
        )
        assert.equal(result.httpStatus, 200)
        assert.equal(result.excerpt.trim(), 'success')

        // The same body with another amount: the receiver's check must refuse it.
        const forged = { ...JSON.parse(result.body!), amount: 99999 }
        const answer = await fetch(`${receiver.url}/payment/notify`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(forged),
        })
        assert.equal(answer.status, 401)
        assert.equal(await answer.text(), 'bad signature')

        // Signed with another key's secret: refused the same way.
        const other = await newKey()
        const mismatched = await sender.send(other.apiKey.pid, `${receiver.url}/payment/notify`)
        assert.equal(mismatched.outcome, 'not_acknowledged')
        assert.equal(mismatched.httpStatus, 401)
      } finally {
        await receiver.stop()
        await scratch.cleanup()
      }
    })
  }
})
