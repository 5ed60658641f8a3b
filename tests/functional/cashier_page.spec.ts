import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { FAKE_NETWORK, FAKE_WALLET } from '#tests/helpers/fake_chain'
import { newOrder, newPlaceholder, prepareLifecycle } from '#tests/helpers/orders'
import { LANGUAGE_COOKIE } from '#cashier/languages'

/** The page as a browser without script gets it. */
async function page(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${process.env.APP_URL}${path}`, {
    headers: { 'accept-language': 'en', ...headers },
  })
  return { status: response.status, headers: response.headers, html: await response.text() }
}

/** Which view the server shows first (the one section of the card without `hidden`). */
function visibleViews(html: string): string[] {
  return [...html.matchAll(/<section [^>]*data-view="([a-z]+)"[^>]*>/g)]
    .filter((match) => !/\shidden[\s>]/.test(match[0]))
    .map((match) => match[1])
}

test.group('Cashier page: first render from the order', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('a waiting order: amount, address, QR and countdown are in the HTML, no script needed', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { amount: 100, redirect_url: 'https://shop.example/back' })
    const { status, headers, html } = await page(`/cashier/${order.tradeId}`)
    assert.equal(status, 200)
    assert.match(headers.get('content-type')!, /^text\/html/)
    assert.deepEqual(visibleViews(html), ['pay'])
    assert.include(html, '<span class="digits">13.80</span>')
    assert.include(html, `data-copy="13.80"`)
    assert.include(html, FAKE_WALLET)
    assert.include(html, `href="fake:${FAKE_WALLET}?amount=13.8"`) // open in wallet: the payment URI
    assert.equal((html.match(/<svg role="img"[^>]*viewBox/g) ?? []).length, 2) // URI QR + address QR
    assert.match(html, /id="countdown"[^>]*>(9:5\d|10:00)</)
    assert.include(html, 'Fake Net')
    assert.match(html, /<html lang="en">/)
  })

  test('the "I have paid" dialog explains the references of the order\'s family when it has its own text', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const intro = (html: string) => /<p class="hint" id="hash-intro">([^<]*)<\/p>/.exec(html)?.[1]
    assert.equal(
      intro((await page(`/cashier/${order.tradeId}`)).html),
      'Paste the transaction hash from your wallet and we check it on the network at once.'
    )
    // A family with several reference forms (its plugin's own `cashier.hash_intro`, plugins/ton/lang).
    await db.from('chains').where('network', FAKE_NETWORK).update({ family: 'ton' })
    assert.equal(
      intro((await page(`/cashier/${order.tradeId}`)).html),
      'Paste the transaction reference: ton:address:lt:hash, lt:hash, or the 64-character hash.'
    )
  })

  test('CSP forbids inline script; the only inline script element is JSON data', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const { headers, html } = await page(`/cashier/${order.tradeId}`)
    const csp = headers.get('content-security-policy')!
    assert.include(csp, "script-src 'self'")
    assert.notInclude(csp, 'unsafe-inline')
    assert.equal(headers.get('cache-control'), 'no-store')
    assert.equal(headers.get('referrer-policy'), 'no-referrer')
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((match) => match[1])
    assert.lengthOf(scripts, 2)
    assert.match(scripts[0], /^ src="\/assets\/cashier\.js\?v=[0-9a-f]{12}" defer$/)
    assert.equal(scripts[1], ' type="application/json" id="cashier-data"')
    assert.notMatch(html, /\son[a-z]+="/) // no inline handlers
  })

  test("the embedded data is the cashier init data and the script's texts", async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { redirect_url: 'https://shop.example/back?x=1' })
    const { html } = await page(`/cashier/${order.tradeId}`)
    const json = /<script type="application\/json" id="cashier-data">(.*?)<\/script>/s.exec(
      html
    )![1]
    assert.notInclude(json, '<')
    const data = JSON.parse(json)
    assert.equal(data.order.trade_id, order.tradeId)
    assert.strictEqual(data.order.actual_amount, 13.8)
    assert.strictEqual(data.order.expiration_time, order.expirationTime)
    assert.isNumber(data.order.server_time)
    assert.equal(data.merchant_return, 'https://shop.example/back?x=1')
    assert.equal(data.return_path, `/pay/return/${order.tradeId}`)
    assert.equal(
      data.strings['error.10011'],
      'This order already has another payment method. Please use the one you chose before.'
    )
  })

  test('the stylesheet and the script are served, with their digest in the URL', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const { html } = await page(`/cashier/${order.tradeId}`)
    for (const [path, type] of [
      [/href="(\/assets\/cashier\.css\?v=\w+)"/.exec(html)![1], /text\/css/],
      [/src="(\/assets\/cashier\.js\?v=\w+)"/.exec(html)![1], /javascript/],
    ] as const) {
      const response = await fetch(`${process.env.APP_URL}${path}`)
      assert.equal(response.status, 200)
      assert.match(response.headers.get('content-type')!, type)
      assert.isAbove((await response.text()).length, 1000)
    }
  })

  test('a placeholder shows the selector with the offered networks and tokens', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client)
    const { html } = await page(`/cashier/${order.tradeId}`)
    assert.deepEqual(visibleViews(html), ['choose'])
    assert.include(html, `value="${FAKE_NETWORK}|USDT"`)
    assert.notInclude(html, 'value="provider|') // provider off by default
    assert.notInclude(html, 'id="hash-dialog"')
  })

  test('the provider channel is offered with its tokens when enabled', async ({
    client,
    assert,
  }) => {
    await settings.set('provider.enabled', 'true')
    await settings.set('provider.allow_tokens', 'USDT')
    const order = await newPlaceholder(client)
    const { html } = await page(`/cashier/${order.tradeId}`)
    assert.include(html, 'value="provider|USDT"')
    assert.notInclude(html, 'value="provider|TRX"')
  })

  test('a child order cannot change its target: no selector, no change button', async ({
    client,
    assert,
  }) => {
    const parent = await newOrder(client)
    const child = await Order.create({
      ...childOf(parent),
      tradeId: `${parent.tradeId.slice(0, 20)}cc`,
    })
    const { html } = await page(`/cashier/${child.tradeId}`)
    assert.notInclude(html, 'data-view="choose"')
    assert.notInclude(html, 'data-show-choose')
    const parentPage = await page(`/cashier/${parent.tradeId}`)
    assert.include(parentPage.html, 'data-show-choose')
  })

  test('paid and expired orders open on their views', async ({ client, assert }) => {
    const paid = await newOrder(client)
    paid.merge({ status: 2, blockTransactionId: 'tx-1' })
    await paid.save()
    assert.deepEqual(visibleViews((await page(`/cashier/${paid.tradeId}`)).html), ['paid'])

    const expired = await newOrder(client)
    expired.merge({ status: 3 })
    await expired.save()
    assert.deepEqual(visibleViews((await page(`/cashier/${expired.tradeId}`)).html), ['expired'])

    // Past its time but not yet swept by the expiry job: expired as well.
    const late = await newOrder(client)
    late.merge({ expirationTime: Date.now() - 1000 })
    await late.save()
    const lateHtml = (await page(`/cashier/${late.tradeId}`)).html
    assert.deepEqual(visibleViews(lateHtml), ['expired'])
    assert.notInclude(lateHtml, 'data-show-choose')
  })

  test('an unknown trade_id is a not-found page with HTTP 404', async ({ assert }) => {
    for (const id of ['AAAAAAAAAAAAAAAAAAAAAA', '%27%20OR%201%3D1--', 'x'.repeat(300)]) {
      const { status, headers, html } = await page(`/cashier/${id}`)
      assert.equal(status, 404)
      assert.match(headers.get('content-type')!, /^text\/html/)
      assert.include(html, 'Payment not found')
      assert.include(headers.get('content-security-policy')!, "script-src 'self'")
    }
  })

  test('the amount is padded to the token precision, never rounded', async ({ client, assert }) => {
    const order = await newOrder(client)
    order.merge({ actualAmount: '13.8123' }) // precision lowered after the order was made
    await order.save()
    const { html } = await page(`/cashier/${order.tradeId}`)
    assert.include(html, '<span class="digits">13.8123</span>')
  })
})

test.group('Cashier page: languages', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('chosen from Accept-Language, Chinese by script and region', async ({ client, assert }) => {
    const order = await newOrder(client)
    const cases: [string, string, string][] = [
      ['ja,en;q=0.5', 'ja', '残り時間'],
      ['zh-CN,zh;q=0.9', 'zh-CN', '剩余时间'],
      ['zh-HK', 'zh-TW', '剩餘時間'],
      ['zh-Hant', 'zh-TW', '剩餘時間'],
      ['zh', 'zh-CN', '剩余时间'],
      ['ko-KR', 'ko', '남은 시간'],
      ['ru', 'ru', 'Осталось времени'],
      ['es-MX', 'es', 'Tiempo restante'],
      ['vi', 'vi', 'Thời gian còn lại'],
      ['fr-FR', 'en', 'Time left'],
      ['', 'en', 'Time left'],
    ]
    for (const [header, lang, text] of cases) {
      const { html } = await page(`/cashier/${order.tradeId}`, { 'accept-language': header })
      assert.include(html, `<html lang="${lang}">`, header)
      assert.include(html, text, header)
      // the digits to send stay plain ASCII in every language
      assert.include(html, '<span class="digits">13.80</span>', header)
    }
  })

  test('the switcher (?lang=) is remembered in a cookie and wins over Accept-Language', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const switched = await page(`/cashier/${order.tradeId}?lang=ru`, { 'accept-language': 'ja' })
    assert.include(switched.html, '<html lang="ru">')
    const cookie = switched.headers.get('set-cookie')!
    assert.match(cookie, new RegExp(`^${LANGUAGE_COOKIE}=ru;`))
    assert.match(cookie, /Max-Age=31536000/)

    const later = await page(`/cashier/${order.tradeId}`, {
      'accept-language': 'ja',
      'cookie': `${LANGUAGE_COOKIE}=ru`,
    })
    assert.include(later.html, '<html lang="ru">')
    assert.isNull(later.headers.get('set-cookie'))

    const bogus = await page(`/cashier/${order.tradeId}?lang=xx`, {
      'accept-language': 'ja',
      'cookie': `${LANGUAGE_COOKIE}=<b>`,
    })
    assert.include(bogus.html, '<html lang="ja">')
    assert.isNull(bogus.headers.get('set-cookie'))
  })

  test('the not-found page is translated too', async ({ assert }) => {
    const { status, html } = await page('/cashier/AAAAAAAAAAAAAAAAAAAAAA', {
      'accept-language': 'zh-CN',
    })
    assert.equal(status, 404)
    assert.include(html, '找不到付款')
  })
})

test.group('Cashier page: branding', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('site settings: name, title, logo, support link, background in a nonce-protected style', async ({
    client,
    assert,
  }) => {
    await settings.set('site.cashier_name', 'Acme Pay')
    await settings.set('site.website_title', 'Acme Store')
    await settings.set('site.logo_url', 'https://cdn.example/logo.png')
    await settings.set('site.support_link', 'https://help.example/contact')
    await settings.set('site.background_color', '#fafafa')
    await settings.set('site.background_image_url', 'https://cdn.example/bg.jpg')
    const order = await newOrder(client)
    const { headers, html } = await page(`/cashier/${order.tradeId}`)
    assert.include(html, 'Acme Pay')
    assert.include(html, '<title>Payment · Acme Store</title>')
    assert.include(html, 'src="https://cdn.example/logo.png"')
    assert.include(html, 'href="https://help.example/contact"')
    const nonce = /'nonce-([^']+)'/.exec(headers.get('content-security-policy')!)![1]
    assert.include(
      html,
      `<style nonce="${nonce}">:root{--page-bg:#fafafa;--page-bg-image:url("https://cdn.example/bg.jpg")}</style>`
    )
    // a fresh nonce per response
    const again = await page(`/cashier/${order.tradeId}`)
    assert.notInclude(again.headers.get('content-security-policy')!, nonce)
  })

  test('values that could break out of their attribute or CSS are left out', async ({
    client,
    assert,
  }) => {
    await settings.set('site.logo_url', 'javascript:alert(1)')
    await settings.set('site.support_link', 'javascript:alert(1)')
    await settings.set('site.background_image_url', 'https://x.example/a.png");}body{display:none')
    const order = await newOrder(client)
    const { html } = await page(`/cashier/${order.tradeId}`)
    assert.notInclude(html, 'javascript:')
    assert.notInclude(html, '<style nonce')
    assert.notInclude(html, 'display:none')
  })
})

/** The columns of a child of `parent` on the same target (for page rendering only). */
function childOf(parent: Order) {
  return {
    orderId: parent.orderId,
    parentId: parent.id,
    apiKeyId: parent.apiKeyId,
    pid: parent.pid,
    paymentType: parent.paymentType,
    currency: parent.currency,
    amount: parent.amount,
    token: parent.token,
    network: parent.network,
    receiveAddress: parent.receiveAddress,
    actualAmount: '13.81',
    status: 1 as const,
    notifyUrl: parent.notifyUrl,
    redirectUrl: parent.redirectUrl,
    expirationTime: parent.expirationTime,
  }
}
