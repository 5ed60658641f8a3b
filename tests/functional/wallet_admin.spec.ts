import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { writeFile, mkdir } from 'node:fs/promises'
import Order, { OrderStatus, type OrderStatusValue } from '#models/order'
import Wallet from '#models/wallet'
import walletAdmin, {
  WalletAdmin,
  WalletInUseError,
  MAX_IMPORT_ENTRIES,
} from '#services/operators/wallet_admin'
import { OperatorError } from '#support/cli/operator_error'
import chainScanner from '#services/chain_scanner'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { runCommand } from '#tests/helpers/ace_command'
import { TRON_WALLET, TRON_WALLET_2, createOrder, orderParams } from '#tests/helpers/merchant'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_WALLET, fakeFamily, fakeTransfer } from '#tests/helpers/fake_chain'
import WalletRemove from '#commands/wallet_remove'
import WalletSet from '#commands/wallet_set'
import WalletImport from '#commands/wallet_import'

const EVM_LOWER = '0x52908400098527886e0f7030069857d2e4169ee7'
const EVM_CANONICAL = '0x52908400098527886E0F7030069857D2E4169EE7'
/** The same address with one letter's case flipped: a broken EIP-55 checksum. */
const EVM_BAD_CHECKSUM = '0x52908400098527886E0F7030069857D2E4169Ee7'

let orderCounter = 0
async function storedOrder(
  network: string,
  address: string,
  token: string,
  amount: string,
  status: OrderStatusValue
) {
  orderCounter++
  return Order.create({
    tradeId: `T${Date.now()}${orderCounter}`.padEnd(24, '0'),
    orderId: `usage-${orderCounter}`,
    pid: '1000',
    paymentType: 'Native',
    currency: 'cny',
    amount: '100',
    token,
    network,
    receiveAddress: address,
    actualAmount: amount,
    status,
    notifyUrl: 'http://127.0.0.1:9/notify',
    expirationTime: Date.now() + 600_000,
  })
}

async function auditActions(action: string) {
  return db.from('audit_log').where('action', action).orderBy('id')
}

test.group('Wallets: batch import', (group) => {
  group.each.setup(() => resetDatabase())

  test('one report line per entry: added in canonical form, present, or invalid with the reason', async ({
    assert,
  }) => {
    const admin = walletAdmin
    await admin.add('tron', TRON_WALLET_2)
    const text = [
      '# receiving wallets, pasted from the spreadsheet',
      EVM_LOWER,
      `tron ${TRON_WALLET}`,
      `bsc,${EVM_LOWER}`,
      '',
      `ETHEREUM\t${EVM_CANONICAL}`,
      `tron; ${TRON_WALLET_2}`,
      `tron ${EVM_CANONICAL}`,
      `ethereum ${EVM_BAD_CHECKSUM}`,
      `nowhere ${TRON_WALLET}`,
      'solana one two',
    ].join('\r\n')

    const report = await admin.importBatch(text, { defaultNetwork: 'Ethereum' })
    assert.deepEqual(
      report.lines.map((line) => [line.line, line.network, line.address, line.outcome]),
      [
        [2, 'ethereum', EVM_CANONICAL, 'added'],
        [3, 'tron', TRON_WALLET, 'added'],
        [4, 'bsc', EVM_CANONICAL, 'added'],
        [6, 'ethereum', EVM_CANONICAL, 'present'],
        [7, 'tron', TRON_WALLET_2, 'present'],
        [8, 'tron', null, 'invalid'],
        [9, 'ethereum', null, 'invalid'],
        [10, 'nowhere', null, 'invalid'],
        [11, null, null, 'invalid'],
      ]
    )
    const reasons = report.lines.map((line) => line.reason)
    assert.deepEqual(reasons.slice(0, 3), [null, null, null])
    assert.equal(reasons[3], 'same wallet as line 2')
    assert.equal(reasons[4], 'already present')
    assert.match(reasons[5]!, /is not a TRON address/)
    assert.match(reasons[6]!, /invalid EIP-55 checksum/)
    assert.match(reasons[7]!, /^Unknown network "nowhere"\. Known networks: /)
    assert.equal(reasons[8], 'expected "address" or "network address"')
    assert.equal(report.lines[0].text, EVM_LOWER)
    assert.deepEqual([report.added, report.present, report.invalid], [3, 2, 4])

    const stored = await Wallet.query().orderBy('id')
    assert.deepEqual(
      stored.map((wallet) => [wallet.network, wallet.address]),
      [
        ['tron', TRON_WALLET_2],
        ['ethereum', EVM_CANONICAL],
        ['tron', TRON_WALLET],
        ['bsc', EVM_CANONICAL],
      ]
    )
    // Each added wallet audited on its own (the one added before included).
    assert.deepEqual(
      (await auditActions('wallet.add')).map((row) => row.subject_id),
      [
        `tron/${TRON_WALLET_2}`,
        `ethereum/${EVM_CANONICAL}`,
        `tron/${TRON_WALLET}`,
        `bsc/${EVM_CANONICAL}`,
      ]
    )
  })

  test('a bare address without a network to fall back on is invalid; a line naming one still works', async ({
    assert,
  }) => {
    const report = await walletAdmin.importBatch(`${TRON_WALLET}\ntron ${TRON_WALLET}`)
    assert.deepEqual(
      report.lines.map((line) => [line.outcome, line.reason]),
      [
        [
          'invalid',
          'no network: write "network address", or choose a network for the lines without one',
        ],
        ['added', null],
      ]
    )
  })

  test('refused as a whole, nothing added: empty text, too many entries', async ({ assert }) => {
    const admin = walletAdmin
    await assert.rejects(
      () => admin.importBatch('\n  \n# only a comment\n', { defaultNetwork: 'tron' }),
      /Nothing to import/
    )
    const many = Array.from({ length: MAX_IMPORT_ENTRIES + 1 }, (_, index) => `fake:${index}`).join(
      '\n'
    )
    const error = await admin
      .importBatch(`tron ${TRON_WALLET}\n${many}`, { defaultNetwork: 'tron' })
      .catch((failure) => failure)
    assert.instanceOf(error, OperatorError)
    assert.equal(
      error.message,
      `At most ${MAX_IMPORT_ENTRIES} addresses per import (${MAX_IMPORT_ENTRIES + 2} given)`
    )
    assert.equal(await countRows('wallets'), 0)
    assert.equal(await countRows('audit_log', { action: 'wallet.add' }), 0)
  })

  test('wallet:import reads a file and prints the report; an invalid line makes it exit 1', async ({
    assert,
  }) => {
    const directory = app.tmpPath('wallet-import')
    await mkdir(directory, { recursive: true })
    const file = `${directory}/wallets-${process.pid}.txt`
    await writeFile(file, `${EVM_LOWER}\ntron not-an-address\n`)
    const result = await runCommand(WalletImport, [file, '--network=polygon'])
    assert.equal(result.exitCode, 1)
    assert.include(result.output, EVM_CANONICAL)
    assert.include(result.output, 'is not a TRON address')
    assert.include(result.output, '1 added, 0 already present, 1 invalid')
    assert.equal(await countRows('wallets', { network: 'polygon', address: EVM_CANONICAL }), 1)

    const missing = await runCommand(WalletImport, [`${directory}/missing.txt`])
    assert.equal(missing.exitCode, 1)
    assert.include(missing.output, `Cannot read ${directory}/missing.txt`)
  })
})

test.group('Wallets: add, enable and disable, remove', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    fakeFamily.scans = []
  })

  test('add: canonical form, note; refusals are operator errors and write nothing', async ({
    assert,
  }) => {
    const admin = walletAdmin
    const wallet = await admin.add('ethereum', EVM_LOWER, '  cold storage  ')
    assert.equal(wallet.address, EVM_CANONICAL)
    assert.equal(wallet.note, 'cold storage')
    const before = await countRows('audit_log')
    for (const [network, address, message] of [
      ['ethereum', EVM_CANONICAL, /already exists \(10001\)/],
      ['ethereum', EVM_BAD_CHECKSUM, /invalid EIP-55 checksum/],
      ['tron', EVM_LOWER, /is not a TRON address/],
      ['nowhere', TRON_WALLET, /Unknown network/],
      [FAKE_NETWORK, `fake:${'x'.repeat(130)}`, /at most 128 characters/],
    ] as const) {
      const error = await admin.add(network, address).catch((failure) => failure)
      assert.instanceOf(error, OperatorError, String(error))
      assert.match(error.message, message)
    }
    await assert.rejects(
      () => admin.add('tron', TRON_WALLET, 'n'.repeat(256)),
      /A note is at most 255 characters/
    )
    assert.equal(await countRows('audit_log'), before)
    assert.equal(await countRows('wallets', { network: 'tron' }), 0)
  })

  test('disable and enable: audited before → after; an unchanged state writes nothing', async ({
    client,
    assert,
  }) => {
    const admin = walletAdmin
    const disabled = await admin.update(FAKE_NETWORK, FAKE_WALLET, { enabled: false })
    assert.isFalse(disabled.enabled)
    // A disabled wallet is handed to no new order.
    const refused = await createOrder(client, orderParams({ network: FAKE_NETWORK, token: 'usdt' }))
    assert.notEqual(refused.body().status_code, 200)
    assert.include(refused.body().message, 'No available wallet address')

    await admin.update(FAKE_NETWORK, FAKE_WALLET, { enabled: false })
    await admin.update(FAKE_NETWORK, FAKE_WALLET, { enabled: true, note: 'hot' })
    const rows = await auditActions('wallet.update')
    assert.deepEqual(
      rows.map((row) =>
        [JSON.parse(row.before), JSON.parse(row.after)].map((state) => [state.enabled, state.note])
      ),
      [
        [
          [true, ''],
          [false, ''],
        ],
        [
          [false, ''],
          [true, 'hot'],
        ],
      ]
    )
    await assert.rejects(
      () => admin.update(FAKE_NETWORK, 'fake:unknown', { enabled: false }),
      /No wallet fake:unknown on fakenet/
    )
  })

  test('a disabled wallet is still watched while an order holds a reservation on it, and pays that order', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    await walletAdmin.update(FAKE_NETWORK, FAKE_WALLET, { enabled: false })

    fakeFamily.pending = [fakeTransfer('tx-disabled', order.actualAmount)]
    const [report] = await chainScanner.scan({ network: FAKE_NETWORK })
    assert.isTrue(report.scanned, report.detail)
    assert.deepEqual(fakeFamily.scans.at(-1)?.addresses, [FAKE_WALLET])
    assert.equal((await Order.findOrFail(order.id)).status, OrderStatus.PAID)

    // Paid: its reservation is gone, and nothing keeps the disabled wallet watched.
    assert.equal(await countRows('amount_locks'), 0)
    const [idle] = await chainScanner.scan({ network: FAKE_NETWORK })
    assert.isFalse(idle.scanned)
    assert.equal(idle.detail, 'no wallet to watch')
  })

  test('remove is refused while an amount is reserved on the wallet; nothing removed, nothing audited', async ({
    client,
    assert,
  }) => {
    await newOrder(client)
    const admin = walletAdmin
    const before = await countRows('audit_log')
    const error = await admin.remove(FAKE_NETWORK, FAKE_WALLET).catch((failure) => failure)
    assert.instanceOf(error, WalletInUseError)
    assert.equal(
      error.message,
      `1 order(s) still wait for a payment to ${FAKE_WALLET} (amounts are reserved on it): ` +
        'disable the wallet so that no new order uses it, and remove it once they have ended'
    )
    assert.equal(await countRows('wallets', { network: FAKE_NETWORK }), 1)
    assert.equal(await countRows('audit_log'), before)

    // ace says how to force it; the service's rule is the same.
    const refused = await runCommand(WalletRemove, [FAKE_NETWORK, FAKE_WALLET])
    assert.equal(refused.exitCode, 1)
    assert.include(refused.output, 'remove it once they have ended; or use --force')

    await db.from('amount_locks').delete()
    await admin.remove(FAKE_NETWORK, FAKE_WALLET)
    assert.equal(await countRows('wallets', { network: FAKE_NETWORK }), 0)
    assert.equal(await countRows('audit_log', { action: 'wallet.remove' }), 1)
  })

  test('wallet:set enables, disables and notes; nothing to change is refused', async ({
    assert,
  }) => {
    const disabled = await runCommand(WalletSet, [
      FAKE_NETWORK,
      FAKE_WALLET,
      '--disable',
      '--note=spare',
    ])
    assert.equal(disabled.exitCode, 0, disabled.output)
    assert.include(disabled.output, `${FAKE_WALLET} on ${FAKE_NETWORK}: disabled, note "spare"`)
    const wallet = await Wallet.findByOrFail('address', FAKE_WALLET)
    assert.isFalse(wallet.enabled)
    assert.equal(wallet.note, 'spare')
    const nothing = await runCommand(WalletSet, [FAKE_NETWORK, FAKE_WALLET])
    assert.equal(nothing.exitCode, 1)
    assert.include(nothing.output, 'Nothing to change')
    const both = await runCommand(WalletSet, [FAKE_NETWORK, FAKE_WALLET, '--enable', '--disable'])
    assert.equal(both.exitCode, 1)
  })
})

test.group('Wallets: listing and usage', (group) => {
  group.each.setup(() => resetDatabase())

  test('orders, paid orders, reservations and received volume per token, in two grouped queries', async ({
    assert,
  }) => {
    const admin = walletAdmin
    const ethereum = await admin.add('ethereum', EVM_CANONICAL)
    const bsc = await admin.add('bsc', EVM_CANONICAL)
    const tron = await admin.add('tron', TRON_WALLET)
    const idle = await admin.add('tron', TRON_WALLET_2)
    await storedOrder('ethereum', EVM_CANONICAL, 'USDT', '13.8', OrderStatus.PAID)
    await storedOrder('ethereum', EVM_CANONICAL, 'USDT', '0.01', OrderStatus.PAID)
    await storedOrder('ethereum', EVM_CANONICAL, 'USDT', '5', OrderStatus.EXPIRED)
    await storedOrder('ethereum', EVM_CANONICAL, 'USDC', '100.123456', OrderStatus.PAID)
    await storedOrder('bsc', EVM_CANONICAL, 'USDT', '7', OrderStatus.PAID)
    await storedOrder(
      'ethereum',
      '0x0000000000000000000000000000000000000001',
      'USDT',
      '50',
      OrderStatus.PAID
    )
    const waiting = await storedOrder('tron', TRON_WALLET, 'USDT', '1.23', OrderStatus.WAITING)
    await db.table('amount_locks').insert({
      network: 'tron',
      address: TRON_WALLET,
      token: 'USDT',
      amount: '1.23',
      order_id: waiting.id,
      expires_at: Date.now() + 600_000,
      created_at: Date.now(),
    })

    const queries: string[] = []
    const knex = db.connection().getReadClient() as unknown as NodeJS.EventEmitter
    const listener = (query: { sql: string }) => queries.push(query.sql)
    knex.on('query', listener)
    let usage: Awaited<ReturnType<WalletAdmin['usage']>>
    try {
      usage = await admin.usage([ethereum, bsc, tron, idle])
    } finally {
      knex.off('query', listener)
    }
    assert.lengthOf(queries, 2, queries.join('\n'))

    assert.deepEqual(WalletAdmin.usageOf(usage, ethereum), {
      orders: 4,
      paidOrders: 3,
      reserved: 0,
      received: [
        { token: 'USDC', amount: '100.123456' },
        { token: 'USDT', amount: '13.81' },
      ],
    })
    assert.deepEqual(WalletAdmin.usageOf(usage, bsc), {
      orders: 1,
      paidOrders: 1,
      reserved: 0,
      received: [{ token: 'USDT', amount: '7' }],
    })
    assert.deepEqual(WalletAdmin.usageOf(usage, tron), {
      orders: 1,
      paidOrders: 0,
      reserved: 1,
      received: [],
    })
    assert.deepEqual(WalletAdmin.usageOf(usage, idle), {
      orders: 0,
      paidOrders: 0,
      reserved: 0,
      received: [],
    })
  })

  test('filters: network, state, part of the address or note (case-insensitive, % taken literally)', async ({
    assert,
  }) => {
    const admin = walletAdmin
    await admin.add('ethereum', EVM_CANONICAL, 'Cold 100%')
    await admin.add('tron', TRON_WALLET, 'hot')
    await admin.add('tron', TRON_WALLET_2)
    await admin.update('tron', TRON_WALLET_2, { enabled: false })
    const addresses = async (filters: Parameters<WalletAdmin['filtered']>[0]) =>
      (await admin.filtered(filters)).map((wallet) => wallet.address)

    assert.deepEqual(await addresses({ network: 'TRON' }), [TRON_WALLET, TRON_WALLET_2])
    assert.deepEqual(await addresses({ enabled: false }), [TRON_WALLET_2])
    assert.deepEqual(await addresses({ search: '4169ee7' }), [EVM_CANONICAL])
    assert.deepEqual(await addresses({ search: 'HOT' }), [TRON_WALLET])
    assert.deepEqual(await addresses({ search: '100%' }), [EVM_CANONICAL])
    assert.deepEqual(await addresses({ search: '%' }), [EVM_CANONICAL])
    assert.deepEqual(await addresses({ search: 'zz_' }), [])
    assert.deepEqual(await addresses({ network: 'tron', enabled: true, search: 'txyz' }), [
      TRON_WALLET,
    ])
  })
})
