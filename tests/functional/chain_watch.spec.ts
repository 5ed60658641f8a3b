import walletAdmin from '#services/operators/wallet_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import type { Assert } from '@japa/assert'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import chainRegistry from '#chains/chain_registry'
import chainWatch from '#chains/chain_watch'
import ChainSet from '#commands/chain_set'
import ChainList from '#commands/chain_list'
import ChainsScan from '#commands/chains_scan'
import { OperatorError } from '#support/cli/operator_error'
import type { HeadHandlers, HeadWatch, ScanContext, ScanResult } from '#chains/chain_family'
import { resetDatabase } from '#tests/helpers/database'
import { runCommand } from '#tests/helpers/ace_command'
import { Anvil } from '#tests/helpers/evm/anvil'
import {
  configureEthereum,
  createEthOrder,
  deployTokens,
  type EvmFixture,
} from '#tests/helpers/evm/evm_setup'
import { TcpRelay, eventually } from '#tests/helpers/tcp_relay'
import { FakeFamily } from '#tests/helpers/fake_chain'

const KEY = '0123456789abcdef0123456789abcdef'

async function status(order: Order) {
  return (await Order.findOrFail(order.id)).status
}

async function cursorRow(network: string) {
  return db.from('chain_cursors').where('network', network).first()
}

/** Waits until the watch of `network` has run `scans` scans and is idle. */
async function settled(network: string, scans: number, timeoutMs = 20_000) {
  return eventually(() => {
    const state = chainWatch.state(network)
    return Boolean(state && state.scans >= scans && !state.scanning)
  }, timeoutMs)
}

/** Starts the watches and waits until ethereum's socket is up and its start scan done. */
async function startOverSocket(assert: Assert) {
  await chainWatch.start()
  assert.isTrue(await eventually(() => chainWatch.state('ethereum')?.push === 'up', 20_000))
  assert.isTrue(await settled('ethereum', 1))
}

test.group('Chain watch: a real node (anvil) over WebSocket', (group) => {
  const anvil = new Anvil()
  const relay = new TcpRelay(0)
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  let fixture: EvmFixture

  group.setup(async () => {
    await anvil.start()
    tokens = await deployTokens(anvil)
    relay.targetPort = Number(new URL(anvil.url).port)
    return async () => {
      await relay.close()
      await anvil.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    await relay.open()
    fixture = await configureEthereum(tokens, [anvil.url], 3)
    // Polls a minute apart (and the same while the socket is down): only a head scans sooner.
    await chainAdmin.set('ethereum', {
      wsUrl: relay.wsUrl,
      scanIntervalSeconds: 60,
      blockTimeSeconds: 60,
    })
    return async () => {
      await chainWatch.stop()
    }
  })

  test('the block that gives the transfer its 3rd confirmation pays it at once, the 2nd does not', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client, { amount: 100 })
    await startOverSocket(assert)
    assert.equal(chainWatch.state('ethereum')!.pollMs, 60_000)

    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount) // 1 confirmation
    await anvil.mine(1) // 2
    const second = await anvil.client.getBlockNumber()
    // The scan of the 2nd confirmation's head ran: the transfer is seen, not paid.
    assert.isTrue(
      await eventually(
        async () => (await cursorRow('ethereum'))?.head_height === second.toString(),
        20_000
      )
    )
    assert.isTrue(await settled('ethereum', 2))
    assert.equal(await status(order), 1)

    await anvil.mine(1) // 3: paid by the scan this head triggers
    const third = await anvil.client.getBlockNumber()
    assert.isTrue(
      await eventually(async () => (await status(order)) === 2, 20_000),
      'paid within seconds of the head (the poll is a minute apart)'
    )
    // The cursor is saved as that scan ends (just after the payment): at the confirming head.
    assert.isTrue(
      await eventually(
        async () => (await cursorRow('ethereum'))?.head_height === third.toString(),
        20_000
      )
    )
    assert.equal((await cursorRow('ethereum')).scanned_height, (third - 2n).toString())
    assert.isAtLeast(chainWatch.state('ethereum')!.heads, 3)
    assert.equal(chainWatch.state('ethereum')!.lastHead, third.toString())
  }).timeout(60_000)

  test('a dropped socket is reopened; the blocks mined meanwhile are scanned from the persisted cursor', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client, { amount: 100 })
    await startOverSocket(assert)
    const scansBefore = chainWatch.state('ethereum')!.scans

    // The socket goes, and new connections are refused for a while.
    await relay.close()
    assert.isTrue(await eventually(() => chainWatch.state('ethereum')?.push === 'down', 20_000))
    const down = chainWatch.state('ethereum')!
    assert.notInclude(down.lastError ?? '', KEY)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(2) // confirmed while no head can come
    assert.equal(await status(order), 1)
    assert.equal(
      chainWatch.state('ethereum')!.scans,
      scansBefore,
      'nothing scanned without a head (poll 60 s)'
    )

    // Back: the watch reconnects by itself (backoff from 1 s) and scans what it missed.
    const acceptedBefore = relay.accepted
    await relay.open()
    assert.isTrue(
      await eventually(async () => (await status(order)) === 2, 20_000),
      'paid after the reconnection'
    )
    assert.isAbove(relay.accepted, acceptedBefore)
    const state = chainWatch.state('ethereum')!
    assert.equal(state.push, 'up')
    assert.isAtLeast(state.reconnects, 1)

    // Heads flow again over the new socket: the next payment is paid by its confirming head.
    const next = await createEthOrder(client, { amount: 50 })
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, next.actualAmount)
    await anvil.mine(2)
    assert.isTrue(await eventually(async () => (await status(next)) === 2, 20_000))
  }).timeout(60_000)

  test('a socket cut while the node stays up is reopened and heads flow again', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client, { amount: 100 })
    await startOverSocket(assert)
    relay.drop()
    assert.isTrue(
      await eventually(() => (chainWatch.state('ethereum')?.reconnects ?? 0) >= 1, 20_000)
    )
    assert.equal(chainWatch.state('ethereum')!.push, 'up')
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(2)
    assert.isTrue(await eventually(async () => (await status(order)) === 2, 20_000))
  }).timeout(60_000)

  test('without a WebSocket the chain is polled at its interval (the block time by default) and pays', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('ethereum', { wsUrl: '', scanIntervalSeconds: 1, blockTimeSeconds: 1 })
    const order = await createEthOrder(client, { amount: 100 })
    await chainWatch.start()
    const state = chainWatch.state('ethereum')!
    assert.equal(state.mode, 'poll')
    assert.equal(state.push, 'off')
    assert.isTrue(await settled('ethereum', 1))
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(2)
    assert.isTrue(await eventually(async () => (await status(order)) === 2, 20_000))
    assert.equal(chainWatch.state('ethereum')!.heads, 0)
    // The order is paid during the scan that saw it; that scan is counted as it ends.
    assert.isTrue(await settled('ethereum', 2), 'the poll that paid it is a second scan')
  }).timeout(60_000)

  test('a configuration change (WebSocket removed) restarts the watch within the next sync', async ({
    assert,
  }) => {
    await chainWatch.start()
    assert.isTrue(await eventually(() => chainWatch.state('ethereum')?.push === 'up', 20_000))
    await chainAdmin.set('ethereum', { wsUrl: null })
    await chainWatch.sync()
    assert.equal(chainWatch.state('ethereum')!.mode, 'poll')
    await chainAdmin.set('ethereum', { enabled: false })
    await chainWatch.sync()
    assert.isNull(chainWatch.state('ethereum'))
  }).timeout(60_000)
})

/** A family whose heads and scans the test drives. */
class HeadFamily extends FakeFamily {
  readonly name: string = 'fakehead'
  handlers: HeadHandlers | null = null
  opened = 0
  /** When each attempt to open started (epoch ms). */
  openedAt: number[] = []
  /** Attempts to open that fail (then cleared), with this message. */
  failOpen: { times: number; message: string } = { times: 0, message: '' }
  /** While set, an attempt to open that does not fail waits for it (the endpoint is slow to answer). */
  openGate: Promise<void> | null = null
  /** While set, scans wait for it. */
  gate: Promise<void> | null = null

  async watchHeads(_chain: Chain, handlers: HeadHandlers): Promise<HeadWatch> {
    this.opened++
    this.openedAt.push(Date.now())
    if (this.failOpen.times > 0) {
      this.failOpen.times--
      throw new Error(this.failOpen.message)
    }
    if (this.openGate) await this.openGate
    this.handlers = handlers
    return { stop: () => (this.handlers === handlers ? (this.handlers = null) : undefined) }
  }

  async scan(context: ScanContext): Promise<ScanResult> {
    if (this.gate) await this.gate
    return super.scan(context)
  }
}

const headFamily = new HeadFamily()
chainRegistry.register(headFamily)
const HEADNET = 'headnet'

async function installHeadChain(changes: Record<string, unknown> = {}) {
  const now = Date.now()
  // Only this chain is watched.
  await db.from('chains').update({ enabled: false })
  await db.table('chains').insert({
    network: HEADNET,
    family: 'fakehead',
    display_name: 'Head Net',
    enabled: true,
    rpc_urls: '[]',
    confirmations: 1,
    scan_interval_seconds: 60,
    block_time_ms: 1000,
    ws_url: `wss://heads.example/v3/${KEY}`,
    sort_order: 1001,
    created_at: now,
    updated_at: now,
    ...changes,
  })
  await db.table('tokens').insert({
    network: HEADNET,
    symbol: 'USDT',
    contract: 'fake:usdt',
    decimals: 6,
    amount_precision: 2,
    enabled: true,
    created_at: now,
    updated_at: now,
  })
  await db.table('wallets').insert({
    network: HEADNET,
    address: 'fake:w',
    enabled: true,
    note: '',
    created_at: now,
    updated_at: now,
  })
  headFamily.scans = []
  headFamily.pending = []
  headFamily.handlers = null
  headFamily.opened = 0
  headFamily.openedAt = []
  headFamily.failOpen = { times: 0, message: '' }
  headFamily.openGate = null
  headFamily.gate = null
}

test.group('Chain watch: coalescing, backoff and fallback (a driven family)', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await installHeadChain()
    return async () => {
      headFamily.gate = null
      headFamily.openGate = null
      await chainWatch.stop()
    }
  })

  test('heads during a scan leave one re-run pending, never a queue', async ({ assert }) => {
    let release!: () => void
    headFamily.gate = new Promise((resolve) => (release = resolve))
    await chainWatch.start()
    assert.isTrue(
      await eventually(() => headFamily.handlers !== null && headFamily.scans.length === 0, 10_000)
    )
    // The start scan is held at the gate; ten heads arrive.
    for (let height = 1; height <= 10; height++) headFamily.handlers!.onHead(String(height))
    headFamily.gate = null
    release()
    assert.isTrue(await settled(HEADNET, 2))
    assert.lengthOf(headFamily.scans, 2)
    assert.equal(chainWatch.state(HEADNET)!.heads, 10)
    assert.equal(chainWatch.state(HEADNET)!.lastHead, '10')
    // One more head: one more scan, resuming from the persisted cursor.
    headFamily.handlers!.onHead('11')
    assert.isTrue(await settled(HEADNET, 3))
    assert.deepEqual(headFamily.scans.at(-1)!.cursor, { scans: 2 })
  })

  test('a push endpoint that fails is retried with a doubling backoff, polled at the block time meanwhile, its key never shown', async ({
    assert,
  }) => {
    headFamily.failOpen = {
      times: 2,
      message: `connect ECONNREFUSED wss://heads.example/v3/${KEY}`,
    }
    // The third attempt (the first not to fail) is held open until the test has seen the polls.
    let letOpen!: () => void
    headFamily.openGate = new Promise((resolve) => (letOpen = resolve))
    await chainWatch.start()
    assert.isTrue(await eventually(() => chainWatch.state(HEADNET)?.push === 'down', 10_000))
    const down = chainWatch.state(HEADNET)!
    assert.equal(down.pollMs, 1000, 'the block time while down')
    assert.notInclude(down.lastError!, KEY)
    assert.include(down.lastError!, 'wss://heads.example/v3/***')
    // Polled at the block time while down: scans without any head.
    assert.isTrue(await eventually(() => headFamily.scans.length >= 3, 10_000))
    assert.equal(chainWatch.state(HEADNET)!.heads, 0)
    // Third attempt, after 1 s then 2 s (a timer may fire a few ms early by Date.now()).
    assert.isTrue(await eventually(() => headFamily.opened === 3, 10_000))
    const [first, second, third] = headFamily.openedAt
    assert.isAtLeast(second - first, 900, 'backoff 1 s')
    assert.isAtLeast(third - second, 1900, 'then 2 s')
    headFamily.openGate = null
    letOpen()
    assert.isTrue(await eventually(() => chainWatch.state(HEADNET)?.push === 'up', 10_000))
    assert.equal(headFamily.opened, 3)
    const up = chainWatch.state(HEADNET)!
    assert.equal(up.reconnects, 1)
    assert.isTrue(await eventually(() => chainWatch.state(HEADNET)!.pollMs === 60_000, 10_000))
    // A head proves the watch works (the backoff starts over); a failure
    // reported by the open watch: down again, then reopened after 1 s.
    headFamily.handlers!.onHead('7')
    const failedAt = Date.now()
    headFamily.handlers!.onError(new Error('socket closed'))
    assert.equal(chainWatch.state(HEADNET)!.push, 'down')
    assert.isTrue(await eventually(() => chainWatch.state(HEADNET)?.push === 'up', 10_000))
    assert.equal(headFamily.opened, 4)
    // After 1 s, not after the 4 s the backoff had reached.
    const reopenedAfter = headFamily.openedAt[3] - failedAt
    assert.isAtLeast(reopenedAfter, 900)
    assert.isBelow(reopenedAfter, 3500)
  }).timeout(40_000)

  test('a poll skips while another process scanned within the interval', async ({ assert }) => {
    await db
      .from('chains')
      .where('network', HEADNET)
      .update({ ws_url: null, scan_interval_seconds: 2 })
    await chainWatch.start()
    assert.isTrue(await settled(HEADNET, 1))
    // Another process keeps scanning: its last_scan_at keeps moving.
    const touch = () =>
      db
        .from('chain_cursors')
        .where('network', HEADNET)
        .update({ last_scan_at: Date.now() })
        .then(() => {})
    await touch()
    const other = setInterval(touch, 200)
    try {
      const scans = headFamily.scans.length
      // Three intervals' worth: without the check the watch would scan once or twice meanwhile.
      const until = Date.now() + 5000
      await eventually(() => Date.now() > until, 6000)
      assert.equal(headFamily.scans.length, scans)
    } finally {
      clearInterval(other)
    }
    assert.isTrue(await eventually(() => headFamily.scans.length > 1, 10_000))
  }).timeout(20_000)
})

test.group('Chain watch: chain:set --ws', (group) => {
  group.each.setup(() => resetDatabase())

  test('takes ws:// or wss:// only, with a clear message otherwise', async ({ assert }) => {
    for (const [url, message] of [
      ['https://mainnet.infura.io/v3/x', /must be a ws:\/\/ or wss:\/\/ URL/],
      ['not a url', /is not a URL/],
      ['ftp://node.example', /must be a ws:\/\/ or wss:\/\/ URL/],
    ] as const) {
      const result = await runCommand(ChainSet, ['ethereum', '--ws', url])
      assert.equal(result.exitCode, 1, url)
      assert.match(result.output, message)
    }
    assert.isNull((await Chain.findByOrFail('network', 'ethereum')).wsUrl)
    // A family that cannot watch heads takes none.
    await assert.rejects(
      () => chainAdmin.set('tron', { wsUrl: 'wss://tron.example' }),
      OperatorError
    )
    const tron = await runCommand(ChainSet, ['tron', '--ws', 'wss://tron.example'])
    assert.equal(tron.exitCode, 1)
    assert.match(tron.output, /The tron family takes no WebSocket endpoint/)
  })

  test('is stored whole, shown masked (chain:set, chain:list, audit), kept when sent back masked, removed by ""', async ({
    assert,
  }) => {
    const url = `wss://mainnet.infura.io/ws/v3/${KEY}`
    const set = await runCommand(ChainSet, ['ethereum', '--ws', url])
    assert.equal(set.exitCode, 0, set.output)
    assert.include(
      set.output,
      'WebSocket: wss://mainnet.infura.io/ws/v3/*** (a scan on every new head)'
    )
    assert.notInclude(set.output, KEY)
    assert.equal((await Chain.findByOrFail('network', 'ethereum')).wsUrl, url)

    const list = await runCommand(ChainList, [])
    assert.include(list.output, 'wss://mainnet.infura.io/ws/v3/***')
    assert.notInclude(list.output, KEY)
    const audit = await db
      .from('audit_log')
      .where('subject_id', 'ethereum')
      .orderBy('id', 'desc')
      .first()
    assert.notInclude(JSON.stringify(audit), KEY)

    // The masked form stands for the stored URL; an unknown masked one is refused.
    assert.equal(
      (await runCommand(ChainSet, ['ethereum', '--ws', 'wss://mainnet.infura.io/ws/v3/***']))
        .exitCode,
      0
    )
    assert.equal((await Chain.findByOrFail('network', 'ethereum')).wsUrl, url)
    const other = await runCommand(ChainSet, ['ethereum', '--ws', 'wss://other.example/ws/v3/***'])
    assert.equal(other.exitCode, 1)
    assert.match(other.output, /matches no stored URL/)

    const cleared = await runCommand(ChainSet, ['ethereum', '--ws', ''])
    assert.equal(cleared.exitCode, 0, cleared.output)
    assert.include(cleared.output, 'WebSocket: none (polled)')
    assert.isNull((await Chain.findByOrFail('network', 'ethereum')).wsUrl)
  })
})

test.group('Chain watch: the request estimate counts a scan per head', (group) => {
  group.each.setup(() => resetDatabase())

  test('with a WebSocket, chain:list estimates a scan per block, not per (longer) scan interval', async ({
    assert,
  }) => {
    await chainAdmin.set('ethereum', {
      rpcUrls: [`https://mainnet.infura.io/v3/${KEY}`],
      scanIntervalSeconds: 60,
      blockTimeSeconds: 12,
      enabled: true,
    })
    await walletAdmin.add('ethereum', '0x' + '11'.repeat(20))
    const polled = await runCommand(ChainList, [])
    assert.notMatch(polled.output, /ethereum needs about/)
    await chainAdmin.set('ethereum', { wsUrl: `wss://mainnet.infura.io/ws/v3/${KEY}` })
    const pushed = await runCommand(ChainList, [])
    // Infura's free tier (37,500 a day) is over with a scan every 12 s (57,600).
    assert.match(
      pushed.output,
      /ethereum needs about 43,632 requests a day \(1 wallet\(s\), 3 token\(s\), a scan on every new head, about every 12 s\)/
    )
    assert.match(
      pushed.output,
      /A scan interval of 19 s fits \(chain:set ethereum --ws "" --scan-interval 19\)/
    )
    assert.notInclude(pushed.output, KEY)
  })
})

test.group('Chain watch: chains:scan catches up with a progress line', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await installHeadChain({ ws_url: null })
  })

  test('runs until caught up, printing progress; --once runs once', async ({ assert }) => {
    const writes: string[] = []
    const write = process.stderr.write.bind(process.stderr)
    // Three bounded runs behind, then caught up.
    let behind = 3
    const scan = headFamily.scan.bind(headFamily)
    headFamily.scan = async (context) => {
      const result = await scan(context)
      const left = behind > 0 ? behind-- : 0
      return {
        ...result,
        caughtUp: left === 0,
        heights: { head: '1000', scanned: String(1000 - left * 100) },
      }
    }
    ;(process.stderr as { write: unknown }).write = (chunk: string) => {
      writes.push(String(chunk))
      return true
    }
    try {
      const result = await runCommand(ChainsScan, ['--network', HEADNET])
      assert.equal(result.exitCode, 0, result.output)
      assert.lengthOf(headFamily.scans, 4)
      assert.match(
        result.output,
        /headnet: 4 runs, 0 transfer\(s\), 0 paid, 0 unmatched in all; last run: 0 transfer\(s\)/
      )
      const progress = writes.join('')
      assert.match(progress, /headnet catching up: 0 blocks, 300 behind/)
      assert.match(progress, /headnet catching up: 300 blocks, 0 behind, 4 runs/)

      behind = 3
      headFamily.scans = []
      const once = await runCommand(ChainsScan, ['--network', HEADNET, '--once'])
      assert.equal(once.exitCode, 0)
      assert.lengthOf(headFamily.scans, 1)
      assert.match(once.output, /more to scan/)
    } finally {
      ;(process.stderr as { write: unknown }).write = write
      headFamily.scan = HeadFamily.prototype.scan.bind(headFamily)
    }
  })
})
