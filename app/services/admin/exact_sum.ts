import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { Decimal, MAX_SIGNIFICANT_DIGITS, toDecimalString } from '#support/text/money'

/**
 * Exact sums of a DECIMAL column, in SQL, on both engines.
 *
 * PostgreSQL keeps NUMERIC exactly and SUM() of it is exact: its text is
 * the sum. SQLite keeps a DECIMAL column as a double (NUMERIC affinity)
 * and sums doubles inexactly, so each value is split into its integer part
 * and its fraction in units of 10^-scale, both summed as 64-bit integers.
 * Every stored amount has at most MAX_SIGNIFICANT_DIGITS (15) significant
 * digits (#support/text/money), which a double returns exactly as written:
 * - the integer part (CAST … AS INTEGER, truncating) is exact below 10^15;
 * - the fraction x − trunc(x) is computed exactly from the double; the
 *   double differs from the decimal by at most x·2^-53. With k integer
 *   digits the decimal has at most f = min(scale, 15 − k) fraction digits,
 *   and x·2^-53·10^f < 10^15·1.2·10^-16 ≈ 0.12 < 0.5: rounding the fraction
 *   at 10^-f gives its digits back exactly. The CASE picks f by magnitude.
 */
export type ExactSumParts = { sql: string; read: (row: Record<string, unknown>) => string }

/**
 * SELECT expressions summing `column` exactly (aliased `${alias}_a` and
 * `${alias}_b`), and the reader turning a result row into a canonical
 * decimal string ("0" for no rows). `column` is trusted SQL (a column
 * name of ours), never user input.
 */
export function exactSum(
  client: QueryClientContract,
  column: string,
  scale: number,
  alias: string
): ExactSumParts {
  if (client.dialect.name === 'postgres') {
    return {
      sql: `CAST(COALESCE(SUM(${column}), 0) AS TEXT) AS ${alias}_a, '0' AS ${alias}_b`,
      read: (row) => toDecimalString(String(row[`${alias}_a`])),
    }
  }
  const fraction = `(${column} - CAST(${column} AS INTEGER))`
  const tiers: string[] = []
  for (let digits = scale; digits >= 0; digits--) {
    // Below 10^(15 - digits) the decimal may have `digits` fraction digits.
    const bound = `1${'0'.repeat(MAX_SIGNIFICANT_DIGITS - digits)}`
    tiers.push(
      `WHEN ${column} < ${bound} THEN CAST(ROUND(${fraction} * 1${'0'.repeat(digits)}) AS INTEGER) * 1${'0'.repeat(scale - digits)}`
    )
  }
  const units = `CASE ${tiers.join(' ')} ELSE 0 END`
  return {
    // As text: a sum past 2^53 would lose digits as a JS number.
    sql:
      `CAST(COALESCE(SUM(CAST(${column} AS INTEGER)), 0) AS TEXT) AS ${alias}_a, ` +
      `CAST(COALESCE(SUM(${units}), 0) AS TEXT) AS ${alias}_b`,
    read: (row) =>
      toDecimalString(
        new Decimal(String(row[`${alias}_a`])).plus(
          new Decimal(String(row[`${alias}_b`])).shiftedBy(-scale)
        )
      ),
  }
}
