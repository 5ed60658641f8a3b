import { test } from '@japa/runner'
import { newTradeId } from '#support/text/trade_id'

test.group('trade_id', () => {
  test('22 alphanumerics, all characters used, no repeats in 20000', ({ assert }) => {
    const seen = new Set<string>()
    const characters = new Set<string>()
    for (let index = 0; index < 20_000; index++) {
      const id = newTradeId()
      assert.match(id, /^[0-9A-Za-z]{22}$/)
      seen.add(id)
      for (const character of id) characters.add(character)
    }
    assert.equal(seen.size, 20_000)
    assert.equal(characters.size, 62)
  })
})
