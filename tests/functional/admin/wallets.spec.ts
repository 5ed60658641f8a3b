import walletAdmin from '#services/operators/wallet_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Wallet from '#models/wallet'
import Order, { OrderStatus } from '#models/order'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { TRON_WALLET, TRON_WALLET_2 } from '#tests/helpers/merchant'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_WALLET } from '#tests/helpers/fake_chain'

const EVM_LOWER = '0x52908400098527886e0f7030069857d2e4169ee7'
const EVM_CANONICAL = '0x52908400098527886E0F7030069857D2E4169EE7'

async function signedIn(role: 'admin' | 'viewer' = 'admin') {
  return AdminAgent.signIn(await createAdminUser({ role }))
}

async function walletRows() {
  return JSON.stringify([
    await db.from('wallets').orderBy('id').select('*'),
    await countRows('audit_log'),
  ])
}

test.group('Console wallets: list', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('each wallet with its orders, paid orders, waiting reservations and received volume per token', async ({
    client,
    assert,
  }) => {
    const paid = await newOrder(client)
    await db.from('orders').where('id', paid.id).update({ status: OrderStatus.PAID })
    await db.from('amount_locks').where('order_id', paid.id).delete()
    const waiting = await newOrder(client)
    await walletAdmin.add('tron', TRON_WALLET)
    await walletAdmin.update('tron', TRON_WALLET, { note: 'cold storage' })

    const agent = await signedIn()
    const page = await agent.get('/wallets')
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    // fake wallet: 2 orders, 1 paid, 1 waiting, received the paid amount
    assert.include(text, `${FAKE_WALLET} ${FAKE_NETWORK} Enabled 2 1 1 ${paid.actualAmount} USDT`)
    assert.include(text, `${TRON_WALLET} cold storage tron Enabled 0 0 0 —`)
    assert.isAbove(Number(waiting.actualAmount), 0)
  })

  test('filters by network, state and text; an empty result says so', async ({ assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    await walletAdmin.add('tron', TRON_WALLET_2)
    await walletAdmin.update('tron', TRON_WALLET_2, { enabled: false })
    await walletAdmin.add('ethereum', EVM_CANONICAL)
    const agent = await signedIn()

    const tron = pageText((await agent.get('/wallets?network=tron')).text)
    assert.include(tron, TRON_WALLET)
    assert.include(tron, TRON_WALLET_2)
    assert.notInclude(tron, EVM_CANONICAL)
    assert.notInclude(tron, FAKE_WALLET)

    const disabled = pageText((await agent.get('/wallets?state=disabled')).text)
    assert.include(disabled, TRON_WALLET_2)
    assert.notInclude(disabled, `${TRON_WALLET} `)

    const search = pageText((await agent.get('/wallets?q=4169ee7')).text)
    assert.include(search, EVM_CANONICAL)
    assert.notInclude(search, TRON_WALLET)

    const none = pageText((await agent.get('/wallets?network=solana')).text)
    assert.include(none, 'No wallet matches these filters')
  })

  test('pages of 50, keyset: the next page continues where the first stopped, filters kept', async ({
    assert,
  }) => {
    const now = Date.now()
    await db.table('wallets').multiInsert(
      Array.from({ length: 60 }, (_, index) => ({
        network: FAKE_NETWORK,
        address: `fake:w${String(index).padStart(3, '0')}`,
        enabled: true,
        note: '',
        created_at: now,
        updated_at: now,
      }))
    )
    const agent = await signedIn()
    const first = await agent.get(`/wallets?network=${FAKE_NETWORK}`)
    const addresses = (html: string) =>
      [...html.matchAll(/<span class="mono break">(fake:[^<]+)<\/span>/g)].map((match) => match[1])
    assert.lengthOf(addresses(first.text), 50)
    const next = /href="([^"]+)" rel="next"/.exec(first.text)![1].replaceAll('&amp;', '&')
    assert.include(next, `network=${FAKE_NETWORK}`)
    const second = await agent.get(next)
    const rest = addresses(second.text)
    assert.lengthOf(rest, 11)
    assert.deepEqual(
      [...addresses(first.text), ...rest].sort(),
      [
        FAKE_WALLET,
        ...Array.from({ length: 60 }, (_, index) => `fake:w${String(index).padStart(3, '0')}`),
      ].sort()
    )
    assert.notMatch(second.text, /rel="next"/)
    assert.include(second.text, '« First page')
  })
})

test.group('Console wallets: changes', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('add: the canonical form is shown; an invalid address and a duplicate are refused with the reason', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const agent = await AdminAgent.signIn(admin)
    await agent.get('/wallets')
    const added = await agent.post('/wallets', {
      network: 'ethereum',
      address: EVM_LOWER,
      note: 'main',
    })
    assert.equal(added.location, '/admin/wallets?network=ethereum')
    const page = pageText((await agent.follow(added.location!)).text)
    assert.include(
      page,
      `Wallet added on ethereum: ${EVM_CANONICAL} (stored in its canonical form).`
    )
    const wallet = await Wallet.query().where('network', 'ethereum').firstOrFail()
    assert.equal(wallet.address, EVM_CANONICAL)
    assert.equal(wallet.note, 'main')
    const audit = await db
      .from('audit_log')
      .where('action', 'wallet.add')
      .orderBy('id', 'desc')
      .firstOrFail()
    assert.equal(audit.actor_user_id, admin.user.id)

    await agent.get('/wallets')
    for (const [fields, message] of [
      [
        { network: 'ethereum', address: EVM_CANONICAL },
        `Wallet address already exists (10001): ${EVM_CANONICAL} on ethereum`,
      ],
      [{ network: 'tron', address: EVM_CANONICAL }, 'is not a TRON address'],
      [
        { network: 'ethereum', address: '0x52908400098527886E0F7030069857D2E4169Ee7' },
        'invalid EIP-55 checksum',
      ],
      [{ network: 'nowhere', address: TRON_WALLET }, 'Unknown network "nowhere"'],
    ] as const) {
      const before = await walletRows()
      const refused = await agent.post('/wallets', fields)
      assert.equal(refused.location, '/admin/wallets')
      const shown = await agent.follow(refused.location!)
      assert.include(pageText(shown.text), message)
      // the address typed is kept in the form
      assert.include(shown.text, `value="${fields.address}"`)
      assert.equal(await walletRows(), before)
    }
  })

  test('disable and enable, back to the filtered list', async ({ assert }) => {
    const wallet = await Wallet.findByOrFail('address', FAKE_WALLET)
    const agent = await signedIn()
    await agent.get(`/wallets?network=${FAKE_NETWORK}`)
    const off = await agent.post(`/wallets/${wallet.id}/disable`)
    assert.equal(off.location, `/admin/wallets?network=${FAKE_NETWORK}`)
    assert.isFalse((await wallet.refresh()).enabled)
    assert.include(
      pageText((await agent.follow(off.location!)).text),
      'is disabled: no new order uses it'
    )
    await agent.post(`/wallets/${wallet.id}/enable`)
    assert.isTrue((await wallet.refresh()).enabled)
    assert.equal(await countRows('audit_log', { action: 'wallet.update' }), 2)
    assert.equal((await agent.post('/wallets/999999/enable')).status, 404)
  })

  test('remove: refused with a clear message while an amount is reserved on it, done once it is free', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const wallet = await Wallet.findByOrFail('address', FAKE_WALLET)
    const agent = await signedIn()
    await agent.get('/wallets')
    const before = await walletRows()
    const refused = await agent.post(`/wallets/${wallet.id}/remove`)
    assert.equal(refused.location, '/admin/wallets')
    assert.include(
      pageText((await agent.follow(refused.location!)).text),
      `1 order(s) still wait for a payment to ${FAKE_WALLET} (amounts are reserved on it): disable the wallet so that no new order uses it, and remove it once they have ended`
    )
    assert.equal(await walletRows(), before)

    await db.from('amount_locks').where('order_id', order.id).delete()
    const removed = await agent.post(`/wallets/${wallet.id}/remove`)
    assert.include(
      pageText((await agent.follow(removed.location!)).text),
      `Wallet ${FAKE_WALLET} was removed from ${FAKE_NETWORK}.`
    )
    assert.isNull(await Wallet.find(wallet.id))
    assert.equal(await countRows('audit_log', { action: 'wallet.remove' }), 1)
    assert.equal(
      (await Order.findOrFail(order.id)).receiveAddress,
      FAKE_WALLET,
      'orders keep their address'
    )
  })

  test('batch import: a report line per entry; refused as a whole when empty or too long', async ({
    assert,
  }) => {
    await walletAdmin.add('tron', TRON_WALLET_2)
    const agent = await signedIn()
    const form = await agent.get('/wallets/import')
    assert.equal(form.status, 200)
    const response = await agent.post('/wallets/import', {
      network: 'ethereum',
      text: [
        `${EVM_LOWER}`,
        `tron ${TRON_WALLET}`,
        `tron ${TRON_WALLET_2}`,
        'tron not-an-address',
        `${EVM_CANONICAL}`,
      ].join('\n'),
    })
    assert.equal(response.status, 200)
    const text = pageText(response.text)
    assert.include(text, '2 added, 2 already present, 1 invalid.')
    assert.include(text, `1 ethereum ${EVM_CANONICAL} Added`)
    assert.include(text, `2 tron ${TRON_WALLET} Added`)
    assert.include(text, `3 tron ${TRON_WALLET_2} Already present already present`)
    assert.include(text, '4 tron not-an-address Invalid "not-an-address" is not a TRON address')
    assert.include(text, `5 ethereum ${EVM_CANONICAL} Already present same wallet as line 1`)
    assert.equal(await countRows('wallets', { address: EVM_CANONICAL }), 1)
    assert.equal(await countRows('audit_log', { action: 'wallet.add' }), 3)

    await agent.get('/wallets/import')
    const before = await walletRows()
    const empty = await agent.post('/wallets/import', { network: '', text: '\n# nothing\n' })
    assert.equal(empty.location, '/admin/wallets/import')
    assert.include(
      pageText((await agent.follow(empty.location!)).text),
      'Nothing to import: paste one address per line'
    )
    const many = Array.from({ length: 1001 }, (_, index) => `fake:many-${index}`).join('\n')
    const tooMany = await agent.post('/wallets/import', { network: FAKE_NETWORK, text: many })
    assert.include(
      pageText((await agent.follow(tooMany.location!)).text),
      'At most 1000 addresses per import (1001 given)'
    )
    assert.equal(await walletRows(), before)
  })
})

test.group('Console wallets: viewers and forged forms', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('a viewer sees the list without actions and gets 403 on every POST; nothing is written', async ({
    assert,
  }) => {
    const wallet = await Wallet.findByOrFail('address', FAKE_WALLET)
    const viewer = await signedIn('viewer')
    const page = await viewer.get('/wallets')
    assert.equal(page.status, 200)
    assert.include(page.text, FAKE_WALLET)
    assert.notInclude(page.text, '/remove"')
    assert.notInclude(page.text, 'name="address"')
    assert.equal((await viewer.get('/wallets/import')).status, 200)
    const before = await walletRows()
    for (const [path, fields] of [
      ['/wallets', { network: 'tron', address: TRON_WALLET }],
      ['/wallets/import', { network: 'tron', text: TRON_WALLET }],
      [`/wallets/${wallet.id}/disable`, {}],
      [`/wallets/${wallet.id}/enable`, {}],
      [`/wallets/${wallet.id}/remove`, {}],
    ] as const) {
      assert.equal((await viewer.post(path, fields)).status, 403, path)
    }
    assert.equal(await walletRows(), before)
  })

  test('a form without its CSRF token is refused with 403', async ({ assert }) => {
    const agent = await signedIn()
    await agent.get('/wallets')
    const response = await agent.post(
      '/wallets',
      { network: 'tron', address: TRON_WALLET },
      { csrf: null }
    )
    assert.equal(response.status, 403)
    assert.equal(await countRows('wallets', { network: 'tron' }), 0)
  })
})
