import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newPlaceholder, prepareLifecycle } from '#tests/helpers/orders'
import { runAce } from '#tests/helpers/processes'

test.group('Progress of long commands', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('orders:expire prints its progress on stderr, the result on stdout', async ({
    client,
    assert,
  }) => {
    const ids: number[] = []
    for (let index = 0; index < 3; index++) ids.push((await newPlaceholder(client)).id)
    await db
      .from('orders')
      .whereIn('id', ids)
      .update({ expiration_time: Date.now() - 1000 })

    const result = await runAce(['orders:expire'])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /Expired 3 order/)
    assert.match(result.stderr, /^orders:expire: 3 expired · \d+\.\d s · \d+\/s$/m)
    assert.notInclude(result.stdout, 'orders:expire:')
    assert.equal(await countRows('orders', { status: 3 }), 3)
  }).timeout(30_000)

  test('secrets:reencrypt prints how many stored secrets it checked and wrote', async ({
    assert,
  }) => {
    await settings.set('metrics.token', 'token-to-reencrypt')
    const result = await runAce(['secrets:reencrypt'])
    assert.equal(result.code, 0, result.stdout + result.stderr)
    // Every secret is under the current key already: checked, none written.
    const lines = [
      ...result.stderr.matchAll(
        /^secrets:reencrypt: (\d+) checked, (\d+) written · \d+\.\d s · \d+\/s$/gm
      ),
    ]
    const line = lines.at(-1) ?? null // the last line has the totals
    assert.isNotNull(line, result.stderr)
    assert.isAtLeast(Number(line![1]), 2) // the API key and the metrics token at least
    assert.equal(Number(line![2]), 0)
    assert.match(
      result.stdout,
      /settings: 0 re-encrypted, 0 encrypted \(were plain\), \d+ already current/
    )
  }).timeout(30_000)
})
