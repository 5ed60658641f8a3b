import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { RpcPool } from '#chains/rpc_pool'
import { resetDatabase } from '#tests/helpers/database'
import { prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, fakeFamily } from '#tests/helpers/fake_chain'
import chainScanner from '#services/chain_scanner'
import { Anvil } from '#tests/helpers/evm/anvil'
import { configureEthereum, deployTokens, scanEthereum } from '#tests/helpers/evm/evm_setup'
import { FakeTronGrid } from '#tests/helpers/tron/fake_trongrid'
import { USDT_CONTRACT, prepareTronNetwork } from '#tests/helpers/tron/tron_network'
import { scanOnce } from '#tests/helpers/scanning'

async function heights(network: string) {
  const row = await db.from('chain_cursors').where('network', network).first()
  return {
    head: row.head_height as string | null,
    scanned: row.scanned_height as string | null,
    at: row.heights_at === null ? null : Number(row.heights_at),
  }
}

test.group('Scanner heights: what the family reports is kept for the console', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    RpcPool.reset()
  })

  test('a run with heights stores head, scanned height and when', async ({ assert }) => {
    fakeFamily.heights = { head: '1000', scanned: '990' }
    const before = Date.now()
    await scanOnce(FAKE_NETWORK)
    const stored = await heights(FAKE_NETWORK)
    assert.deepInclude(stored, { head: '1000', scanned: '990' })
    assert.isAtLeast(stored.at!, before)
  })

  test('a run without heights, and a failed run, leave the stored ones as they were', async ({
    assert,
  }) => {
    fakeFamily.heights = { head: '1000', scanned: '990' }
    await scanOnce(FAKE_NETWORK)
    const first = await heights(FAKE_NETWORK)
    fakeFamily.heights = undefined
    await scanOnce(FAKE_NETWORK)
    assert.deepEqual(await heights(FAKE_NETWORK), first)
    fakeFamily.heights = { head: '2000', scanned: '1999' }
    fakeFamily.failScan = 'node unreachable'
    const [report] = await chainScanner.scan({ network: FAKE_NETWORK })
    assert.isFalse(report.scanned)
    assert.deepEqual(await heights(FAKE_NETWORK), first)
  })

  test('a head without a scanned height clears the old scanned height', async ({ assert }) => {
    fakeFamily.heights = { head: '1000', scanned: '990' }
    await scanOnce(FAKE_NETWORK)
    fakeFamily.heights = { head: '1010' }
    await scanOnce(FAKE_NETWORK)
    assert.deepInclude(await heights(FAKE_NETWORK), { head: '1010', scanned: null })
  })

  test('heights that are no block numbers are dropped, not stored', async ({ assert }) => {
    fakeFamily.heights = { head: '-5', scanned: '3' }
    await scanOnce(FAKE_NETWORK)
    assert.deepEqual(await heights(FAKE_NETWORK), { head: null, scanned: null, at: null })
    fakeFamily.heights = { head: '12', scanned: '1e3' }
    await scanOnce(FAKE_NETWORK)
    assert.deepInclude(await heights(FAKE_NETWORK), { head: '12', scanned: null })
  })

  test('heights beyond JS numbers are kept exactly', async ({ assert }) => {
    fakeFamily.heights = {
      head: '123456789012345678901234567890',
      scanned: '123456789012345678901234567800',
    }
    await scanOnce(FAKE_NETWORK)
    assert.deepInclude(await heights(FAKE_NETWORK), {
      head: '123456789012345678901234567890',
      scanned: '123456789012345678901234567800',
    })
  })
})

test.group('Scanner heights: EVM (anvil)', (group) => {
  const anvil = new Anvil()
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }

  group.setup(async () => {
    await anvil.start()
    tokens = await deployTokens(anvil)
    return () => anvil.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    await configureEthereum(tokens, [anvil.url], 3)
  })

  const nodeHead = async () => BigInt((await anvil.rpc('eth_blockNumber')) as string)

  test('the node head and the block the cursor reaches; behind, the scanned height trails', async ({
    assert,
  }) => {
    await scanEthereum()
    const head = await nodeHead()
    const first = await heights('ethereum')
    assert.equal(first.head, head.toString())
    const firstCursor = JSON.parse(
      (await db.from('chain_cursors').where('network', 'ethereum').first()).cursor
    )
    assert.equal(first.scanned, firstCursor.block)

    await anvil.mine(20)
    await settings.set('chains.max_blocks_per_scan', '5')
    const report = await scanEthereum()
    assert.isFalse(report.caughtUp)
    const behind = await heights('ethereum')
    assert.equal(behind.head, (head + 20n).toString())
    assert.equal(behind.scanned, (BigInt(first.scanned!) + 5n).toString())

    await settings.set('chains.max_blocks_per_scan', '5000')
    assert.isTrue((await scanEthereum()).caughtUp)
    const caughtUp = await heights('ethereum')
    // Caught up: the cursor is at the deepest block with 3 confirmations.
    assert.equal(caughtUp.scanned, (head + 20n - 2n).toString())
  })
})

test.group('Scanner heights: TRON (fake TronGrid)', (group) => {
  const fake = new FakeTronGrid()

  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
  })

  test('caught up: the head and the solid head; a listing cut short leaves the scanned height unknown', async ({
    assert,
  }) => {
    const network = await prepareTronNetwork(fake)
    fake.mine(30)
    await scanOnce('tron')
    assert.deepInclude(await heights('tron'), {
      head: String(fake.head.number),
      scanned: String(fake.solidHead.number),
    })

    for (let index = 1; index <= 40; index++) {
      fake.payTrc20({
        from: network.payer,
        to: network.wallet,
        contract: USDT_CONTRACT,
        amount: 1_000_000n + BigInt(index),
      })
    }
    fake.mine(19)
    // Pages of 7 rows: one run reads 35 rows of a stream at most.
    fake.shortPageRows = 7
    const report = await scanOnce('tron')
    assert.isFalse(report.caughtUp)
    assert.deepInclude(await heights('tron'), { head: String(fake.head.number), scanned: null })
  })
})
