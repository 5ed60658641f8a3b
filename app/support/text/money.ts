import BigNumber from 'bignumber.js'

/**
 * The one place where money is shaped. Amounts travel through the code as
 * decimal strings and are computed with BigNumber, never with JS floats.
 */
export const Decimal = BigNumber.clone({
  DECIMAL_PLACES: 30,
  ROUNDING_MODE: BigNumber.ROUND_HALF_UP,
  EXPONENTIAL_AT: [-40, 40],
})
export type Decimal = BigNumber

/** A plain decimal literal: digits, optional fraction, no sign or exponent. */
const DECIMAL_LITERAL = /^\d+(\.\d+)?$/

export function isDecimalLiteral(value: string): boolean {
  return DECIMAL_LITERAL.test(value)
}

/** Number of digits after the point of a decimal literal ("1.50" → 2). */
export function fractionDigits(value: string): number {
  const point = value.indexOf('.')
  return point === -1 ? 0 : value.length - point - 1
}

/**
 * The most significant digits an amount may have. Every amount is kept
 * within it, because it is what every place an amount passes through holds
 * exactly: SQLite stores DECIMAL columns (NUMERIC affinity) as REAL, i.e. a
 * double, PostgreSQL as NUMERIC; the spec sends amounts to merchants as JSON
 * numbers, which their parsers (JavaScript, PHP, Python…) read as doubles,
 * and a signed callback only verifies if the merchant reads the same number.
 * A double holds any decimal of up to 15 significant digits exactly (and
 * prints it back as written); a 16th digit may be lost. Digits count from
 * the first non-zero one down to the units or the last fraction digit, so
 * whole amounts stay below 10^15 (no exponent in JSON, within NUMERIC(30,8)).
 * An amount beyond this bound is refused where it is computed (10004),
 * never rounded.
 */
export const MAX_SIGNIFICANT_DIGITS = 15

/**
 * Canonical decimal string of a value read from the database or computed:
 * no exponent, no trailing zeros ("12.3500" → "12.35", 7 → "7").
 * SQLite hands DECIMAL columns back as JS numbers; amounts are bounded to
 * MAX_SIGNIFICANT_DIGITS, which a double returns exactly as written.
 */
export function toDecimalString(value: string | number | BigNumber): string {
  const number = value instanceof BigNumber ? value : new Decimal(String(value))
  if (!number.isFinite()) throw new TypeError(`Not a finite decimal: ${String(value)}`)
  return new Decimal(number).toFixed()
}

/** Rounds UP to `precision` fraction digits: the merchant never receives less. */
export function ceilToPrecision(value: BigNumber, precision: number): BigNumber {
  return new Decimal(value).decimalPlaces(precision, BigNumber.ROUND_UP)
}

/** Smallest step of an amount with `precision` fraction digits (10^-precision). */
export function stepOf(precision: number): BigNumber {
  return new Decimal(1).shiftedBy(-precision)
}

/** Fixed-point text with exactly `digits` fraction digits ("12.3" → "12.3000"). */
export function toFixedDigits(value: string | BigNumber, digits: number): string {
  return new Decimal(value).toFixed(digits, BigNumber.ROUND_HALF_UP)
}

/**
 * A decimal as a JSON number, for response bodies the spec types as
 * `number`. Only output goes through here, and only values within
 * MAX_SIGNIFICANT_DIGITS (every stored amount is), for which the double's
 * shortest form is the decimal itself.
 */
export function toJsonNumber(value: string | BigNumber): number {
  return new Decimal(value).toNumber()
}

/** Count of significant digits of a decimal, zeros of the integer part included ("0.0012" → 2, "1000" → 4). */
export function significantDigits(value: string | BigNumber): number {
  const number = new Decimal(value)
  return number.isZero() ? 1 : number.precision(true)
}

/** Whether an amount can be stored, read back and sent exactly (see MAX_SIGNIFICANT_DIGITS). */
export function isKeptExactly(value: string | BigNumber): boolean {
  return significantDigits(value) <= MAX_SIGNIFICANT_DIGITS
}

/**
 * The canonical decimal string to write into a money column; refuses a
 * value that could not be read back exactly. Callers refuse such amounts
 * with a business error first: this is the last guard, so that no path
 * ever stores a silently rounded amount.
 */
export function storableDecimal(value: string | number | BigNumber): string {
  const text = toDecimalString(value)
  if (!isKeptExactly(text)) {
    throw new RangeError(
      `${text} has more than ${MAX_SIGNIFICANT_DIGITS} significant digits and cannot be stored exactly`
    )
  }
  return text
}

/**
 * Base units of a chain (wei, sun, lamports, nanotons) → token units, exact:
 * ("13800000", 6) → "13.8". Refuses anything but a non-negative integer.
 */
export function fromBaseUnits(baseUnits: bigint | string | number, decimals: number): string {
  const text = String(baseUnits)
  if (!/^\d+$/.test(text)) throw new RangeError(`not a base-unit integer: ${text}`)
  return new Decimal(text).shiftedBy(-decimals).toFixed()
}

/**
 * Token units → base units, for payment URIs: ("13.8", 6) → 13800000n.
 * The amount must be exact at `decimals` (order amounts are rounded to a
 * precision of at most the token's decimals).
 */
export function toBaseUnits(amount: string, decimals: number): bigint {
  const units = new Decimal(amount).shiftedBy(decimals)
  if (!units.isInteger() || units.isNegative()) {
    throw new RangeError(`${amount} cannot be expressed in base units with ${decimals} decimals`)
  }
  return BigInt(units.toFixed(0))
}
