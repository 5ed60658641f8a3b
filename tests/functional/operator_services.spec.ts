import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import type { BaseCommand } from '@adonisjs/core/ace'
import { ChainAdmin } from '#services/operators/chain_admin'
import { RateAdmin } from '#services/operators/rate_admin'
import { WalletAdmin } from '#services/operators/wallet_admin'
import { OperatorError } from '#support/cli/operator_error'
import operator from '#services/operator_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { TRON_WALLET } from '#tests/helpers/merchant'
import WalletAdd from '#commands/wallet_add'
import RateSet from '#commands/rate_set'
import RateList from '#commands/rate_list'
import { AuditLog } from '#services/audit/audit_log'

async function run(command: typeof BaseCommand, argv: string[]) {
  const ace = await app.container.make('ace')
  ace.ui.switchMode('raw')
  const instance = await ace.create(command, argv)
  await instance.exec()
  const output = instance.logger
    .getLogs()
    .map((log) => log.message)
    .join('\n')
  return { exitCode: instance.exitCode ?? 0, output }
}

/** Refuses every network, as a console's own rule (say, a read-only operator) might. */
class FrozenChains extends ChainAdmin {
  async find(network: string): Promise<never> {
    throw new OperatorError(`${network} is frozen`)
  }
}

test.group('Operator services: one rule, two front doors', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(() => {
    app.container.restoreAll([ChainAdmin, RateAdmin, WalletAdmin])
  })

  test('commands use the services the container gives: a swapped one answers them', async ({
    assert,
  }) => {
    const calls: string[][] = []
    class RecordingRates extends RateAdmin {
      async set(token: string, fiat: string, rate: string) {
        calls.push([token, fiat, rate])
        return super.set(token, fiat, rate)
      }
    }
    app.container.swap(RateAdmin, () => new RecordingRates(new AuditLog()))
    const result = await run(RateSet, ['usdt', 'cny', '7.25'])
    assert.equal(result.exitCode, 0, result.output)
    assert.deepEqual(calls, [['usdt', 'cny', '7.25']])
    assert.match((await run(RateList, [])).output, /USDT.*CNY.*7\.25/)
  })

  test('the wallet service is built with the chain service of the container', async ({
    assert,
  }) => {
    app.container.swap(ChainAdmin, () => new FrozenChains(new AuditLog()))
    const refused = await run(WalletAdd, ['tron', TRON_WALLET])
    assert.equal(refused.exitCode, 1)
    assert.match(refused.output, /tron is frozen/)
    await assert.rejects(() => operator.addWallet('tron', TRON_WALLET), /tron is frozen/)
    assert.equal(await countRows('wallets'), 0)

    app.container.restore(ChainAdmin)
    const added = await run(WalletAdd, ['tron', TRON_WALLET])
    assert.equal(added.exitCode, 0, added.output)
  })

  test('the services check their input themselves, whichever door calls them', async ({
    assert,
  }) => {
    const wallets = await app.container.make(WalletAdmin)
    await assert.rejects(
      () => wallets.add('tron', '0x52908400098527886E0F7030069857D2E4169EE7'),
      /TRON/
    )
    await assert.rejects(
      () => wallets.add('nowhere', TRON_WALLET),
      /Unknown network "nowhere"\. Known networks: /
    )
    const rates = await app.container.make(RateAdmin)
    await assert.rejects(() => rates.set('USDT', 'CNY', '0'), OperatorError)
    await assert.rejects(() => rates.set('USDT', 'CNY', '-x'), OperatorError)
    const chains = await app.container.make(ChainAdmin)
    await assert.rejects(() => chains.set('tron', { confirmations: 1001 }), /from 0 to 1000/)
  })
})
