import { test } from '@japa/runner'
import { holdOff, reserve, resetPacers, usedToday } from '#chains/rpc_pacer'

const DAY_END = Date.parse('2026-03-01T23:59:59.500Z')

test.group('RPC pacer', (group) => {
  group.each.setup(() => resetPacers())

  test('slots are 1/perSecond apart, in order of reservation', ({ assert }) => {
    const budget = { perSecond: 4, perDay: null }
    const now = 1_000_000
    assert.deepEqual(
      [
        reserve('k', budget, 1, now),
        reserve('k', budget, 1, now),
        reserve('k', budget, 1, now + 100),
      ],
      [0, 250, 400]
    )
    // Later than the next slot: no wait.
    assert.equal(reserve('k', budget, 1, now + 5000), 0)
  })

  test('the daily count resets at 00:00 UTC; a spent day reserves nothing', ({ assert }) => {
    const budget = { perSecond: 1000, perDay: 2 }
    assert.isNotNull(reserve('k', budget, 1, DAY_END))
    assert.isNotNull(reserve('k', budget, 1, DAY_END))
    assert.isNull(reserve('k', budget, 1, DAY_END))
    assert.equal(usedToday('k', DAY_END), 2)
    assert.equal(usedToday('k', DAY_END + 1000), 0)
    assert.isNotNull(reserve('k', budget, 1, DAY_END + 1000))
  })

  test('a batch counts as its calls, for the day and the pace; one too large for the day is refused whole', ({
    assert,
  }) => {
    const budget = { perSecond: 10, perDay: 60 }
    assert.equal(reserve('k', budget, 50, 0), 0)
    assert.equal(reserve('k', budget, 1, 0), 5000)
    assert.isNull(reserve('k', budget, 10, 0))
    assert.equal(usedToday('k', 0), 51)
  })

  test('a hold-off delays the next slot of every caller of the key', ({ assert }) => {
    const budget = { perSecond: 1000, perDay: null }
    holdOff('k', 1500, 0)
    assert.equal(reserve('k', budget, 1, 0), 1500)
    assert.equal(reserve('other', budget, 1, 0), 0)
    // An unpaced endpoint (no budget) waits out a hold-off too, then goes unpaced again.
    holdOff('free', 800, 0)
    assert.deepEqual(
      [reserve('free', null, 1, 0), reserve('free', null, 1, 0), reserve('free', null, 1, 900)],
      [800, 800, 0]
    )
  })
})
