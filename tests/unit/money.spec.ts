import { test } from '@japa/runner'
import {
  Decimal,
  ceilToPrecision,
  fractionDigits,
  isDecimalLiteral,
  isKeptExactly,
  stepOf,
  storableDecimal,
  toDecimalString,
  toFixedDigits,
  toJsonNumber,
} from '#support/text/money'

test.group('Money', () => {
  test('decimal strings are canonical whatever the database hands back', ({ assert }) => {
    assert.equal(toDecimalString('12.350000'), '12.35') // PostgreSQL NUMERIC
    assert.equal(toDecimalString(12.35), '12.35') // SQLite REAL
    assert.equal(toDecimalString('0.3'), '0.3')
    assert.equal(toDecimalString('7'), '7')
    assert.equal(toDecimalString('0.00000001'), '0.00000001')
  })

  test('ceil rounds up at the precision and keeps exact values', ({ assert }) => {
    assert.equal(ceilToPrecision(new Decimal(100).dividedBy('7.25'), 2).toFixed(), '13.8')
    assert.equal(ceilToPrecision(new Decimal(100).dividedBy('7.25'), 4).toFixed(), '13.7932')
    assert.equal(ceilToPrecision(new Decimal('10'), 2).toFixed(), '10')
    assert.equal(ceilToPrecision(new Decimal('10.001'), 2).toFixed(), '10.01')
  })

  test('step of a precision', ({ assert }) => {
    assert.equal(stepOf(2).toFixed(), '0.01')
    assert.equal(stepOf(6).toFixed(), '0.000001')
  })

  test('sums of steps stay exact (no float drift)', ({ assert }) => {
    let amount = new Decimal('13.8')
    for (let index = 0; index < 100; index++) amount = amount.plus(stepOf(2))
    assert.equal(amount.toFixed(), '14.8')
  })

  test('fixed digits for signatures and callbacks', ({ assert }) => {
    assert.equal(toFixedDigits('12.5', 4), '12.5000')
    assert.equal(toFixedDigits('100', 2), '100.00')
  })

  test('JSON numbers of bounded decimals print as the decimal', ({ assert }) => {
    assert.equal(JSON.stringify(toJsonNumber('13.8')), '13.8')
    assert.equal(JSON.stringify(toJsonNumber('123456789.123456')), '123456789.123456')
  })

  test('amounts are kept exactly up to 15 significant digits', ({ assert }) => {
    assert.isTrue(isKeptExactly('137931034.482745'))
    assert.isTrue(isKeptExactly('0.000001'))
    assert.isTrue(isKeptExactly(new Decimal('999999999999999')))
    // Zeros of the integer part count: whole amounts stay below 10^15.
    assert.isTrue(isKeptExactly('1000000000'))
    assert.isFalse(isKeptExactly('1000000000000000'))
    assert.isFalse(isKeptExactly('9999999999999900.5'))
    assert.isFalse(isKeptExactly('1000000000.000001'))
    assert.isFalse(isKeptExactly('0.1234567890123456'))
  })

  test('money is written canonical, or refused when it could not be read back exactly', ({
    assert,
  }) => {
    assert.equal(storableDecimal('13.800000'), '13.8')
    assert.equal(storableDecimal(new Decimal('100.00')), '100')
    assert.throws(
      () => storableDecimal('9999999999999900.123456'),
      /more than 15 significant digits/
    )
    // Why 15: a 16th digit does not survive a double (SQLite REAL, a merchant's JSON parser).
    assert.notEqual(String(Number('9999999999999900.123456')), '9999999999999900.123456')
    assert.equal(String(Number('137931034.482745')), '137931034.482745')
  })

  test('decimal literals', ({ assert }) => {
    assert.isTrue(isDecimalLiteral('100'))
    assert.isTrue(isDecimalLiteral('100.50'))
    assert.isFalse(isDecimalLiteral('-1'))
    assert.isFalse(isDecimalLiteral('1e3'))
    assert.isFalse(isDecimalLiteral('.5'))
    assert.isFalse(isDecimalLiteral('1.'))
    assert.equal(fractionDigits('1.2300'), 4)
    assert.equal(fractionDigits('12'), 0)
  })
})
