import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import type { BaseCommand } from '@adonisjs/core/ace'
import chainAdmin from '#services/operators/chain_admin'
import rateAdmin from '#services/operators/rate_admin'
import walletAdmin from '#services/operators/wallet_admin'
import { OperatorError } from '#support/cli/operator_error'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { TRON_WALLET } from '#tests/helpers/merchant'
import WalletAdd from '#commands/wallet_add'
import RateSet from '#commands/rate_set'
import RateList from '#commands/rate_list'

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

/**
 * Replaces one method of a service for a test (the services are module
 * singletons: commands, the console and tests all hold the same instance),
 * restored by the group's teardown.
 */
const restores: Array<() => void> = []
function replaceMethod<S extends object, K extends keyof S>(service: S, name: K, method: S[K]) {
  const own = Object.prototype.hasOwnProperty.call(service, name)
  const previous = service[name]
  service[name] = method
  restores.push(() => {
    if (own) service[name] = previous
    else delete service[name]
  })
}

test.group('Operator services: one rule, two front doors', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(() => {
    while (restores.length > 0) restores.pop()!()
  })

  test('commands call the same service instance as the console: a change to it answers them', async ({
    assert,
  }) => {
    const calls: string[][] = []
    const set = rateAdmin.set.bind(rateAdmin)
    replaceMethod(rateAdmin, 'set', (token: string, fiat: string, rate: string) => {
      calls.push([token, fiat, rate])
      return set(token, fiat, rate)
    })
    const result = await run(RateSet, ['usdt', 'cny', '7.25'])
    assert.equal(result.exitCode, 0, result.output)
    assert.deepEqual(calls, [['usdt', 'cny', '7.25']])
    assert.match((await run(RateList, [])).output, /USDT.*CNY.*7\.25/)
  })

  test('the wallet service asks the chain service for its network: a refusal there stops a wallet', async ({
    assert,
  }) => {
    replaceMethod(chainAdmin, 'find', async (network: string): Promise<never> => {
      throw new OperatorError(`${network} is frozen`)
    })
    const refused = await run(WalletAdd, ['tron', TRON_WALLET])
    assert.equal(refused.exitCode, 1)
    assert.match(refused.output, /tron is frozen/)
    await assert.rejects(() => walletAdmin.add('tron', TRON_WALLET), /tron is frozen/)
    assert.equal(await countRows('wallets'), 0)

    restores.pop()!()
    const added = await run(WalletAdd, ['tron', TRON_WALLET])
    assert.equal(added.exitCode, 0, added.output)
  })

  test('the services check their input themselves, whichever door calls them', async ({
    assert,
  }) => {
    const wallets = walletAdmin
    await assert.rejects(
      () => wallets.add('tron', '0x52908400098527886E0F7030069857D2E4169EE7'),
      /TRON/
    )
    await assert.rejects(
      () => wallets.add('nowhere', TRON_WALLET),
      /Unknown network "nowhere"\. Known networks: /
    )
    const rates = rateAdmin
    await assert.rejects(() => rates.set('USDT', 'CNY', '0'), OperatorError)
    await assert.rejects(() => rates.set('USDT', 'CNY', '-x'), OperatorError)
    const chains = chainAdmin
    await assert.rejects(() => chains.set('tron', { confirmations: 1001 }), /from 0 to 1000/)
  })
})
