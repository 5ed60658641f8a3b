import walletAdmin from '#services/operators/wallet_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import chainScanner from '#services/chain_scanner'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { parseEvmReference } from '#plugins/evm/evm_verify'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { createOrder, merchantVerifiesCallback, orderParams } from '#tests/helpers/merchant'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { runAce } from '#tests/helpers/processes'
import { Anvil, EMPTY_PAYER_KEY } from '#tests/helpers/evm/anvil'
import { type RpcProxy } from '#tests/helpers/evm/rpc_proxy'
import {
  configureEthereum,
  createEthOrder,
  deployTokens,
  randomAddress,
  scanEthereum,
  startNodeBehindProxy,
  type EvmFixture,
} from '#tests/helpers/evm/evm_setup'

test.group('EVM chain: scanning a real node (anvil)', (group) => {
  const anvil = new Anvil()
  const merchant = new MerchantServer()
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  let fixture: EvmFixture

  group.setup(async () => {
    await anvil.start()
    await merchant.start()
    tokens = await deployTokens(anvil)
    return async () => {
      await anvil.stop()
      await merchant.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    fixture = await configureEthereum(tokens, [anvil.url], 3)
    merchant.reset()
  })

  test('USDT: order over HTTP → transfer → confirmations → chains:scan → paid → signed callback', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client, { notify_url: merchant.notifyUrl, amount: 100 })
    assert.equal(order.receiveAddress, fixture.wallet)
    assert.equal(order.actualAmount, '13.8')
    await scanEthereum() // cursor set before the payment

    const hash = await anvil.payToken(fixture.usdt, 6, fixture.wallet, '13.80')
    await anvil.mine(1) // 2 confirmations: not yet
    await scanEthereum()
    assert.equal((await Order.findOrFail(order.id)).status, 1)

    await anvil.mine(1) // 3 confirmations
    const result = await runAce(['chains:scan', '--network', 'ethereum'])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    assert.match(result.stdout, /ethereum: 1 transfer\(s\), 1 paid/)

    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, hash.toLowerCase())

    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 1)
    const body = JSON.parse(merchant.requests[0].body)
    assert.equal(body.trade_id, order.tradeId)
    assert.equal(body.block_transaction_id, hash.toLowerCase())
    assert.strictEqual(body.actual_amount, 13.8)
    assert.isTrue(merchantVerifiesCallback(body))
  }).timeout(60_000)

  test('ETH: a native transfer pays an ETH order', async ({ client, assert }) => {
    const order = await createEthOrder(client, {
      token: 'eth',
      amount: 100,
      notify_url: merchant.notifyUrl,
    })
    assert.equal(order.actualAmount, '0.005')
    await scanEthereum()
    const hash = await anvil.payNative(fixture.wallet, '0.005')
    await anvil.mine(2)
    const report = await scanEthereum()
    assert.equal(report.paid, 1)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, hash.toLowerCase())
    await callbackDeliverer.runOnce()
    assert.isTrue(merchantVerifiesCallback(JSON.parse(merchant.requests[0].body)))
  })

  test('a payment made while nothing scanned is found from the persisted cursor', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client)
    await scanEthereum()
    const cursorBefore = (await db.from('chain_cursors').where('network', 'ethereum').first())
      .cursor
    // "down": blocks go by, the payment lands among them
    await anvil.mine(5)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(10)
    const result = await runAce(['chains:scan', '--network', 'ethereum'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.notEqual(
      (await db.from('chain_cursors').where('network', 'ethereum').first()).cursor,
      cursorBefore
    )
  }).timeout(60_000)

  test('the first scan starts from the oldest open order, not from the head', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(20)
    await scanEthereum() // no cursor yet: must look back to the order's creation
    assert.equal((await Order.findOrFail(order.id)).status, 2)
  })

  test('a transfer that matches no order is recorded as unmatched', async ({ client, assert }) => {
    await createEthOrder(client)
    await scanEthereum()
    const hash = await anvil.payToken(fixture.usdt, 6, fixture.wallet, '13.79')
    await anvil.mine(3)
    const report = await scanEthereum()
    assert.equal(report.unmatched, 1)
    const row = await UnmatchedPayment.firstOrFail()
    assert.equal(row.reference, hash.toLowerCase())
    assert.equal(row.amount, '13.79')
    assert.equal(row.toAddress, fixture.wallet)
  })

  test('one transfer never pays twice, even when blocks are scanned again', async ({
    client,
    assert,
  }) => {
    const first = await createEthOrder(client)
    await scanEthereum()
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, first.actualAmount)
    await anvil.mine(3)
    await scanEthereum()
    const second = await createEthOrder(client) // same amount, freed by the payment
    assert.equal(second.actualAmount, first.actualAmount)
    await db.from('chain_cursors').update({ cursor: '' }) // rescan from the oldest open order
    await scanEthereum()
    assert.equal((await Order.findOrFail(second.id)).status, 1)
    assert.equal(await countRows('callbacks'), 1)
  })

  test('transfers to other addresses and of other tokens are not taken', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client)
    await scanEthereum()
    await anvil.payToken(fixture.usdt, 6, randomAddress(), order.actualAmount)
    const other = await anvil.deployToken('XYZ', 6)
    await anvil.payToken(other, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(3)
    const report = await scanEthereum()
    assert.equal(report.transfers, 0)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('a payment reorganised out before it was deep enough never pays', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client)
    await scanEthereum()
    const snapshot = await anvil.snapshot()
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(1) // 2 of 3 confirmations
    await scanEthereum()
    await anvil.revert(snapshot) // the block with the payment is gone
    await anvil.mine(6)
    await scanEthereum()
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('a reorganisation below the cursor is noticed and the new blocks are scanned', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('ethereum', { confirmations: 1 })
    const order = await createEthOrder(client)
    const snapshot = await anvil.snapshot()
    await anvil.mine(3)
    await scanEthereum() // cursor on a block that will be replaced
    await anvil.revert(snapshot)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(4)
    await scanEthereum()
    assert.equal((await Order.findOrFail(order.id)).status, 2)
  })
})

test.group('EVM chain: submit-tx-hash and verification', (group) => {
  const anvil = new Anvil()
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  let fixture: EvmFixture

  group.setup(async () => {
    await anvil.start()
    tokens = await deployTokens(anvil)
    return () => anvil.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    fixture = await configureEthereum(tokens, [anvil.url], 3)
  })

  const submit = (client: any, tradeId: string, reference: string) =>
    client
      .post(`/pay/submit-tx-hash/${tradeId}`)
      .json({ block_transaction_id: reference })
      .accept('json')

  test('a confirmed token transfer pays the order', async ({ client, assert }) => {
    const order = await createEthOrder(client)
    const hash = await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(2)
    const response = await submit(client, order.tradeId, hash.toUpperCase().replace('0X', '0x'))
    response.assertStatus(200)
    assert.deepEqual(response.body().data, {
      trade_id: order.tradeId,
      block_transaction_id: hash.toLowerCase(),
      status: 2,
    })
  })

  test('a native transfer verifies too', async ({ client, assert }) => {
    const order = await createEthOrder(client, { token: 'eth' })
    const hash = await anvil.payNative(fixture.wallet, order.actualAmount)
    await anvil.mine(2)
    assert.equal((await submit(client, order.tradeId, hash)).body().data.status, 2)
  })

  const refusals: [string, (order: Order) => Promise<string>, RegExp][] = [
    ['not found', async () => `0x${'ab'.repeat(32)}`, /was not found/],
    ['not a hash', async () => 'hello-world-0001', /not a transaction hash/],
    [
      'not yet confirmed',
      (order) => anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount),
      /not yet confirmed \(1 of 3/,
    ],
    [
      'to another address',
      async (order) => {
        const hash = await anvil.payToken(fixture.usdt, 6, randomAddress(), order.actualAmount)
        await anvil.mine(3)
        return hash
      },
      /it pays 0x/,
    ],
    [
      'of another token',
      async (order) => {
        const hash = await anvil.payToken(fixture.usdc, 6, fixture.wallet, order.actualAmount)
        await anvil.mine(3)
        return hash
      },
      /does not transfer USDT/,
    ],
    [
      'of another amount',
      async () => {
        const hash = await anvil.payToken(fixture.usdt, 6, fixture.wallet, '1.00')
        await anvil.mine(3)
        return hash
      },
      /transfers 1 USDT, the order expects 13.8/,
    ],
    [
      'that reverted',
      async (order) => {
        // the sender has no tokens: the call reverts; an explicit gas limit gets it mined anyway
        const hash = await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount, {
          key: EMPTY_PAYER_KEY,
          gas: 100_000n,
        })
        await anvil.mine(3)
        return hash
      },
      /failed on chain/,
    ],
  ]
  for (const [name, arrange, message] of refusals) {
    test(`refuses a transaction ${name}`, async ({ client, assert }) => {
      const order = await createEthOrder(client)
      const reference = await arrange(order)
      const response = await submit(client, order.tradeId, reference)
      response.assertStatus(400)
      assert.match(response.body().message, message)
      assert.equal((await Order.findOrFail(order.id)).status, 1)
    })
  }

  test('the reference formats', ({ assert }) => {
    const hash = `0x${'Ab'.repeat(32)}`
    assert.equal(parseEvmReference(hash), hash.toLowerCase())
    assert.equal(parseEvmReference(hash.slice(2)), hash.toLowerCase())
    assert.throws(() => parseEvmReference('0x1234'), /not a transaction hash/)
  })

  test('payment URIs are EIP-681', async ({ client, assert }) => {
    const usdtOrder = await createEthOrder(client, { amount: 100 })
    const usdtUri = (await client.get(`/pay/payment-uri/${usdtOrder.tradeId}`)).body().data.uri
    assert.equal(
      usdtUri,
      `ethereum:${fixture.usdt}@1/transfer?address=${fixture.wallet}&uint256=13800000`
    )
    const ethOrder = await createEthOrder(client, { token: 'eth', amount: 100 })
    const ethUri = (await client.get(`/pay/payment-uri/${ethOrder.tradeId}`)).body().data.uri
    assert.equal(ethUri, `ethereum:${fixture.wallet}@1?value=5000000000000000`)
  })
})

test.group('EVM chain: RPC behaviour', (group) => {
  const anvil = new Anvil()
  let proxy: RpcProxy
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }

  group.setup(async () => {
    const node = await startNodeBehindProxy(anvil)
    ;({ tokens, proxy } = node)
    return node.stop
  })
  group.each.setup(async () => {
    await resetDatabase()
    proxy.maxLogRange = null
    proxy.reset()
  })

  /** Calls of one scan over `blocks` new blocks, with `orders` open orders on 100 wallets. */
  async function callsOfOneScan(client: any, orders: number) {
    await resetDatabase()
    const fixture = await configureEthereum(tokens, [proxy.url], 1)
    const wallets = [fixture.wallet]
    for (let index = 1; index < 100; index++) {
      const wallet = randomAddress()
      await walletAdmin.add('ethereum', wallet)
      wallets.push(wallet)
    }
    await db.from('settings').where('key', 'order.amount_max_steps').delete()
    for (let index = 0; index < orders; index++) {
      await createOrder(
        client,
        orderParams({ network: 'ethereum', token: 'usdt', amount: 100 + (index % 50) })
      )
    }
    await scanEthereum() // sets the cursor
    await anvil.mine(40)
    proxy.reset()
    const report = await scanEthereum()
    assert(report.caughtUp)
    return Object.fromEntries(proxy.calls)
  }

  function assert(condition: boolean) {
    if (!condition) throw new Error('scan did not catch up')
  }

  test('RPC calls per block range do not grow with open orders (1 vs 1000 on 100 addresses)', async ({
    client,
    assert: check,
  }) => {
    const withOne = await callsOfOneScan(client, 1)
    const withThousand = await callsOfOneScan(client, 1000)
    check.deepEqual(withThousand, withOne)
    // 40 blocks: one getLogs call (range 1000), the blocks in batches for ETH
    check.equal(withOne.eth_getLogs, 1)
  }).timeout(180_000)

  test('a log range the node refuses is split until it is accepted', async ({
    client,
    assert: check,
  }) => {
    const fixture = await configureEthereum(tokens, [proxy.url], 1)
    const order = await createEthOrder(client)
    await scanEthereum()
    await anvil.mine(30)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(30)
    proxy.maxLogRange = 10n
    proxy.reset()
    await scanEthereum()
    check.equal((await Order.findOrFail(order.id)).status, 2)
    check.isAbove(proxy.calls.get('eth_getLogs') ?? 0, 6)
  })

  test('a dead first endpoint fails over to the next', async ({ client, assert: check }) => {
    const fixture = await configureEthereum(tokens, ['http://127.0.0.1:9/dead', proxy.url], 1)
    const order = await createEthOrder(client)
    await scanEthereum()
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(1)
    await scanEthereum()
    check.equal((await Order.findOrFail(order.id)).status, 2)
  })

  test('every endpoint down: the scan fails, keeps its cursor and says why', async ({
    client,
    assert: check,
  }) => {
    await configureEthereum(tokens, [proxy.url], 1)
    await createEthOrder(client)
    await scanEthereum()
    const before = (await db.from('chain_cursors').first()).cursor
    await chainAdmin.set('ethereum', { rpcUrls: ['http://127.0.0.1:9/dead'] })
    const [report] = await chainScanner.scan({ network: 'ethereum' })
    check.match(report.detail, /scan failed: every RPC endpoint failed/)
    const row = await db.from('chain_cursors').first()
    check.equal(row.cursor, before)
    check.match(row.last_error, /every RPC endpoint failed/)
  })
})
