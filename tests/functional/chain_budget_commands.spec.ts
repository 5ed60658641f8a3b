import walletAdmin from '#services/operators/wallet_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import ChainList from '#commands/chain_list'
import { resetDatabase } from '#tests/helpers/database'
import { runAce } from '#tests/helpers/processes'
import { randomAddress } from '#tests/helpers/evm/evm_setup'
import { FAKE_NETWORK, installFakeChain } from '#tests/helpers/fake_chain'

const INFURA = 'https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef'

/** The chain:list row of a network, cells trimmed (boxed table of a process, or raw "|" rows in-process). */
function rowOf(output: string, network: string): string[] {
  for (const line of output.split('\n')) {
    const cells = line
      .trim()
      .split(/[│|]/)
      .map((cell) => cell.trim())
    if (line.trim().startsWith('│')) cells.shift()
    if (line.trim().endsWith('│')) cells.pop()
    if (cells[0] === network) return cells
  }
  throw new Error(`no row for ${network} in:\n${output}`)
}

test.group('Operator commands: request budgets', (group) => {
  group.each.setup(() => resetDatabase())

  test('chain:list shows the estimate, the budget and a warning when over it; chain:set sets the budget (processes)', async ({
    assert,
  }) => {
    await chainAdmin.set('ethereum', { rpcUrls: [INFURA], enabled: true })
    await walletAdmin.add('ethereum', randomAddress())

    const listed = await runAce(['chain:list'])
    assert.equal(listed.code, 0, listed.stderr)
    const output = listed.stdout + listed.stderr
    const row = rowOf(output, 'ethereum')
    // requests/day, budget/day (Infura free tier: 37,500 a day, 6/s)
    assert.equal(row[8], '43,632')
    assert.equal(row[9], '37,500 (6/s)')
    assert.notInclude(output, '0123456789abcdef0123456789abcdef')
    assert.match(
      output,
      /ethereum needs about 43,632 requests a day \(1 wallet\(s\), 3 token\(s\), a scan every 12 s\) but its RPC endpoints allow 37,500/
    )
    assert.match(output, /A scan interval of 19 s fits \(chain:set ethereum --scan-interval 19\)/)

    const raised = await runAce([
      'chain:set',
      'ethereum',
      '--requests-per-day',
      '100000',
      '--requests-per-second',
      '2.5',
    ])
    assert.equal(raised.code, 0, raised.stderr + raised.stdout)
    assert.match(raised.stdout, /request budget: 2.5\/s, 100000\/day per endpoint/)
    const chain = await Chain.findByOrFail('network', 'ethereum')
    assert.equal(chain.rpcRequestsPerSecond, 2.5)
    assert.equal(chain.rpcRequestsPerDay, 100_000)
    const fits = await runAce(['chain:list'])
    assert.equal(rowOf(fits.stdout, 'ethereum')[9], '100,000 (2.5/s)')
    assert.notMatch(fits.stdout + fits.stderr, /ethereum needs about/)

    const back = await runAce([
      'chain:set',
      'ethereum',
      '--requests-per-day',
      '',
      '--requests-per-second',
      '',
    ])
    assert.equal(back.code, 0, back.stderr + back.stdout)
    const restored = await Chain.findByOrFail('network', 'ethereum')
    assert.isNull(restored.rpcRequestsPerSecond)
    assert.isNull(restored.rpcRequestsPerDay)
    assert.equal(rowOf((await runAce(['chain:list'])).stdout, 'ethereum')[9], '37,500 (6/s)')
  }).timeout(120_000)

  test('chain:set refuses a bad budget with a clear message (process)', async ({ assert }) => {
    const words = await runAce(['chain:set', 'ethereum', '--requests-per-second', 'fast'])
    assert.equal(words.code, 1)
    assert.match(words.stderr, /--requests-per-second takes a number, not "fast"/)
    const tiny = await runAce(['chain:set', 'ethereum', '--requests-per-second', '0'])
    assert.equal(tiny.code, 1)
    assert.match(tiny.stderr, /from 0.01 to 100000/)
    const fraction = await runAce(['chain:set', 'ethereum', '--requests-per-day', '10.5'])
    assert.equal(fraction.code, 1)
    assert.match(fraction.stderr, /whole number/)
    assert.isNull((await Chain.findByOrFail('network', 'ethereum')).rpcRequestsPerDay)
  }).timeout(120_000)

  test('a family without an estimate shows "-"; no endpoint shows "no endpoint"; an interrupted scan says so', async ({
    assert,
  }) => {
    await installFakeChain()
    await db.table('chain_cursors').insert({
      network: FAKE_NETWORK,
      cursor: '{}',
      caught_up: false,
      last_scan_at: Date.now(),
      last_error: 'interrupted: every RPC endpoint failed; last: HTTP 429',
      updated_at: Date.now(),
    })
    const ace = await app.container.make('ace')
    ace.ui.switchMode('raw')
    const command = await ace.create(ChainList, [])
    await command.exec()
    const output = command.ui.logger
      .getLogs()
      .map((log) => log.message)
      .join('\n')
    const row = rowOf(output, FAKE_NETWORK)
    assert.equal(row[8], '-')
    assert.equal(row[9], 'no endpoint')
    assert.match(row[10], /INTERRUPTED, progress kept: every RPC endpoint failed; last: HTTP 429$/)
  })
})
