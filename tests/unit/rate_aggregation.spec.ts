import { test } from '@japa/runner'
import { Decimal } from '#support/text/money'
import { aggregate, type SourceAnswer } from '#rates/rate_aggregation'
import { MarkupError, applyMarkup, isMarkup, parseMarkup } from '#rates/rate_markup'

const NOW = 1_800_000_000_000
const RULES = { maxAgeMs: 600_000, minSources: 2, maxDeviationPercent: 2 }

function answer(source: string, price: string | null, ageMs = 1000, error = ''): SourceAnswer {
  return {
    source,
    price: price === null ? null : new Decimal(price),
    fetchedAt: NOW - ageMs,
    error,
  }
}

test.group('Rates: aggregation of the sources’ answers', () => {
  test('the median of three fresh answers', ({ assert }) => {
    const result = aggregate(
      [answer('okx_p2p', '7.21'), answer('coingecko', '7.19'), answer('coinbase', '7.25')],
      RULES,
      NOW
    )
    assert.isTrue(result.ok)
    if (!result.ok) return
    assert.equal(result.rate.toFixed(), '7.21')
    assert.sameMembers(result.used, ['okx_p2p', 'coingecko', 'coinbase'])
    assert.lengthOf(result.dropped, 0)
  })

  test('an even count takes the mean of the middle two, exactly', ({ assert }) => {
    const result = aggregate([answer('a', '7.2'), answer('b', '7.21')], RULES, NOW)
    assert.isTrue(result.ok)
    if (result.ok) assert.equal(result.rate.toFixed(), '7.205')
  })

  test('an outlier is dropped and flagged; the median is taken of the rest', ({ assert }) => {
    const result = aggregate(
      [answer('a', '7.20'), answer('b', '7.22'), answer('c', '7.21'), answer('wrong', '9.5')],
      RULES,
      NOW
    )
    assert.isTrue(result.ok)
    if (!result.ok) return
    assert.equal(result.rate.toFixed(), '7.21')
    assert.deepEqual(
      result.dropped.map((entry) => entry.source),
      ['wrong']
    )
    assert.isTrue(result.dropped[0].deviationPercent.gt(2))
    assert.notInclude(result.used, 'wrong')
  })

  test('a source that failed or answered too long ago is not used, and is named', ({ assert }) => {
    const result = aggregate(
      [
        answer('a', '7.20'),
        answer('b', '7.22'),
        answer('old', '7.00', 700_000),
        answer('down', null, 1000, 'timed out after 5 s'),
      ],
      RULES,
      NOW
    )
    assert.isTrue(result.ok)
    if (!result.ok) return
    assert.equal(result.rate.toFixed(), '7.21')
    assert.deepEqual(result.stale, ['old'])
    assert.deepEqual(result.failed, ['down'])
  })

  test('fewer fresh sources than the minimum, all stale, none at all, or disagreeing: refused with the reason', ({
    assert,
  }) => {
    const one = aggregate([answer('a', '7.2'), answer('down', null, 0, 'HTTP 429')], RULES, NOW)
    assert.isFalse(one.ok)
    if (!one.ok) assert.match(one.reason, /1 fresh agreeing source\(s\), 2 needed; failed: down/)

    const stale = aggregate([answer('a', '7.2', 900_000), answer('b', '7.3', 900_000)], RULES, NOW)
    assert.isFalse(stale.ok)
    if (!stale.ok) assert.include(stale.reason, 'older than 600 s (a, b)')

    const failing = aggregate([answer('a', null, 0, 'HTTP 418: banned')], RULES, NOW)
    assert.isFalse(failing.ok)
    if (!failing.ok) assert.include(failing.reason, 'no source answered (a: HTTP 418: banned)')

    const none = aggregate([], RULES, NOW)
    assert.isFalse(none.ok)
    if (!none.ok) assert.equal(none.reason, 'no enabled source prices it')

    const apart = aggregate([answer('a', '7.0'), answer('b', '8.0')], RULES, NOW)
    assert.isFalse(apart.ok)
    if (!apart.ok) assert.include(apart.reason, 'disagree by more than 2 %')
  })
})

test.group('Rates: markup notation', () => {
  test('~, + and - parse; a plain number is no markup', ({ assert }) => {
    assert.deepInclude(parseMarkup('~1.02'), { kind: 'factor', text: '~1.02' })
    assert.equal(parseMarkup('+0.3').value.toFixed(), '0.3')
    assert.equal(parseMarkup('-0.2').value.toFixed(), '-0.2')
    assert.isTrue(isMarkup(' ~1.02'))
    assert.isFalse(isMarkup('7.25'))
    for (const bad of ['1.02', '~', '~abc', '*2', '~0', '~3', '+-1', '~1.02x'])
      assert.throws(() => parseMarkup(bad), MarkupError)
  })

  test('applied exactly to the live rate', ({ assert }) => {
    const rate = new Decimal('7.21')
    assert.equal(applyMarkup(rate, parseMarkup('~1.02')).toFixed(), '7.3542')
    assert.equal(applyMarkup(rate, parseMarkup('+0.3')).toFixed(), '7.51')
    assert.equal(applyMarkup(rate, parseMarkup('-0.2')).toFixed(), '7.01')
    assert.equal(applyMarkup(rate, null).toFixed(), '7.21')
    // 100 CNY at ~1.02: the payer pays 100 ÷ 7.3542 USDT, rounded up to the token's precision later.
    assert.equal(
      new Decimal(100)
        .dividedBy(applyMarkup(rate, parseMarkup('~1.02')))
        .toFixed(2, Decimal.ROUND_UP),
      '13.60'
    )
    assert.throws(() => applyMarkup(new Decimal('0.1'), parseMarkup('-0.2')), /no positive rate/)
  })
})
