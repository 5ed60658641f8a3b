import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import orderExpiry from '#services/order_expiry'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { runAce } from '#tests/helpers/processes'
import { Anvil } from '#tests/helpers/evm/anvil'
import {
  configureEthereum,
  createEthOrder,
  deployTokens,
  scanEthereum,
  type EvmFixture,
} from '#tests/helpers/evm/evm_setup'

/*
 * A late payment never pays another order, replayed on a real node: the
 * payers' transfers are mined in chain order, the scanner reads them from
 * the node, and the order each pays is decided by its block time.
 */

type EndOfLife = 'expiry' | 'closure'

test.group('EVM chain (anvil): late payments', (group) => {
  const anvil = new Anvil()
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  let fixture: EvmFixture

  /** Block time (ms) of a mined transaction. */
  async function blockTimeOf(hash: string): Promise<number> {
    const receipt: any = await anvil.rpc('eth_getTransactionReceipt', [hash])
    const block: any = await anvil.rpc('eth_getBlockByNumber', [receipt.blockNumber, false])
    return Number(BigInt(block.timestamp)) * 1000
  }

  /** The chain's clock (ms): the head block's time, which may run ahead of ours. */
  async function chainNow(): Promise<number> {
    const block: any = await anvil.rpc('eth_getBlockByNumber', ['latest', false])
    return Number(BigInt(block.timestamp)) * 1000
  }

  /**
   * Ends the order's life, by the expiry job or by `orders:close`. Block
   * times have second precision and anvil's clock may run ahead of ours, so
   * the end is put after `after` (a block time that must fall in the life).
   */
  async function endLife(order: Order, how: EndOfLife, after?: number) {
    if (how === 'closure') {
      const result = await runAce(['orders:close', order.tradeId])
      if (result.code !== 0) throw new Error(result.stderr + result.stdout)
      if (after !== undefined) {
        const closed = await Order.findOrFail(order.id)
        if (closed.expirationTime < after)
          throw new Error('the chain clock runs ahead: cannot replay this timeline')
      }
    } else {
      await db
        .from('orders')
        .where('id', order.id)
        .update({
          expiration_time: Math.min(Date.now() - 1, Math.max(after ?? 0, order.createdAt) + 1),
        })
      if (after !== undefined && after >= Date.now() - 1)
        throw new Error('the chain clock runs ahead: cannot replay this timeline')
      await orderExpiry.expireDue()
    }
    const ended = await Order.findOrFail(order.id)
    if (ended.status !== 3) throw new Error('the order did not end')
    return ended
  }

  /** Lets our clock pass the chain's, so that new blocks are timed after what came before. */
  async function waitForChainClock() {
    const target = await chainNow()
    while (Date.now() <= target + 1000) await new Promise((resolve) => setTimeout(resolve, 50))
  }

  group.setup(async () => {
    await anvil.start()
    tokens = await deployTokens(anvil)
    return () => anvil.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    fixture = await configureEthereum(tokens, [anvil.url], 1)
    await waitForChainClock()
  })

  for (const how of ['expiry', 'closure'] as const) {
    test(`${how}: A paid in its life, seen after it ended and after B was created; A's transfer first on chain`, async ({
      client,
      assert,
    }) => {
      await scanEthereum() // the cursor is set before anything happens
      const a = await createEthOrder(client, { amount: 100 })
      const hashA = await anvil.payToken(fixture.usdt, 6, fixture.wallet, a.actualAmount)
      await endLife(a, how, await blockTimeOf(hashA))
      const b = await createEthOrder(client, { amount: 100 })
      assert.equal(b.receiveAddress, a.receiveAddress)
      assert.notEqual(b.actualAmount, a.actualAmount) // A's amount is still reserved
      await waitForChainClock()
      const hashB = await anvil.payToken(fixture.usdt, 6, fixture.wallet, b.actualAmount)
      await anvil.mine(1)

      const report = await scanEthereum()
      assert.equal(report.paid, 2)
      const paidA = await Order.findOrFail(a.id)
      const paidB = await Order.findOrFail(b.id)
      assert.equal(paidA.status, 2)
      assert.equal(paidA.blockTransactionId, hashA.toLowerCase())
      assert.equal(paidB.status, 2)
      assert.equal(paidB.blockTransactionId, hashB.toLowerCase())
      assert.equal(await countRows('unmatched_payments'), 0)
      assert.equal(await countRows('callbacks'), 2)
    }).timeout(60_000)

    test(`${how}: A's payer pays after A ended, B's payer first on chain: B paid, A's transfer unmatched`, async ({
      client,
      assert,
    }) => {
      await scanEthereum()
      const a = await createEthOrder(client, { amount: 100 })
      const ended = await endLife(a, how)
      const b = await createEthOrder(client, { amount: 100 })
      assert.notEqual(b.actualAmount, a.actualAmount)
      // block times have second precision: the late payer's block comes a whole second after the end
      while (Date.now() < ended.expirationTime + 1000)
        await new Promise((resolve) => setTimeout(resolve, 50))
      await waitForChainClock()
      const hashB = await anvil.payToken(fixture.usdt, 6, fixture.wallet, b.actualAmount)
      const lateA = await anvil.payToken(fixture.usdt, 6, fixture.wallet, a.actualAmount)
      await anvil.mine(1)

      const report = await scanEthereum()
      assert.equal(report.paid, 1)
      assert.equal(report.unmatched, 1)
      assert.equal((await Order.findOrFail(a.id)).status, 3)
      assert.equal((await Order.findOrFail(b.id)).blockTransactionId, hashB.toLowerCase())
      const row = await UnmatchedPayment.findByOrFail('reference', lateA.toLowerCase())
      assert.equal(row.amount, a.actualAmount)
      assert.match(row.reason, new RegExp(`made after the life of order ${a.tradeId} ended`))
    }).timeout(60_000)
  }
})
