import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import ApiKey from '#models/api_key'
import Chain from '#models/chain'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { runAce } from '#tests/helpers/processes'
import { SEEDED_EVM_NETWORKS } from '#tests/helpers/seeded_networks'
import { TEST_SECRET } from '#tests/helpers/merchant'

const INSTALLED = ['api_keys', 'settings', 'chains', 'tokens', 'users']

test.group('Installation seeders (node ace db:seed)', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.teardown(() => resetDatabase())

  test('db:seed installs what setup installs, for the enabled plugins only, and is harmless when run again', async ({
    assert,
  }) => {
    for (const table of INSTALLED) await db.from(table).delete()

    const first = await runAce(['db:seed'], { PLUGINS: '-ton' })
    assert.equal(first.code, 0, first.stderr)
    assert.match(first.stdout, /completed .*index_seeder/)
    assert.include(
      first.stdout,
      'Created API key PID 1000 with the secret from INITIAL_API_SECRET.'
    )
    assert.equal((await ApiKey.findByOrFail('pid', '1000')).signingSecret(), TEST_SECRET)
    const networks = (await Chain.query().orderBy('sort_order')).map((chain) => chain.network)
    assert.deepEqual(networks, ['tron', ...SEEDED_EVM_NETWORKS, 'solana'])
    assert.equal(await countRows('tokens', { network: 'ton' }), 0)
    assert.equal(await countRows('users'), 1)

    await db.from('chains').where('network', 'tron').update({ confirmations: 7 })
    const counts = await Promise.all(INSTALLED.map((table) => countRows(table)))
    const again = await runAce(['db:seed'], { PLUGINS: '-ton' })
    assert.equal(again.code, 0, again.stderr)
    assert.notInclude(again.stdout, 'Created')
    assert.deepEqual(await Promise.all(INSTALLED.map((table) => countRows(table))), counts)
    assert.equal((await Chain.findByOrFail('network', 'tron')).confirmations, 7)

    // Turned on again, the plugin's rows are added, nothing else changes.
    const all = await runAce(['db:seed'])
    assert.equal(all.code, 0, all.stderr)
    assert.isNotNull(await Chain.findBy('network', 'ton'))
    assert.equal((await Chain.findByOrFail('network', 'tron')).confirmations, 7)
  }).timeout(60_000)
})
