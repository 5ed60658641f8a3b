import { column } from '@adonisjs/lucid/orm'
import { storableDecimal, toDecimalString } from '#support/text/money'

/**
 * Column decorators shared by the models. The two databases hand values
 * back differently (PostgreSQL: BIGINT and NUMERIC as strings, booleans as
 * booleans; SQLite: numbers and 0/1); these normalise both.
 */

/**
 * DECIMAL column exposed as a canonical decimal string. Written canonical
 * and within the digits both databases keep exactly (storableDecimal), so
 * what is read back is what was written.
 */
export const decimalColumn = (options: { columnName?: string } = {}) =>
  column({
    ...options,
    consume: (value: unknown) =>
      value === null || value === undefined ? value : toDecimalString(value as string | number),
    prepare: (value: unknown) =>
      value === null || value === undefined ? value : storableDecimal(value as string | number),
  })

/** BIGINT epoch-milliseconds column exposed as a number. */
export const epochColumn = (options: { columnName?: string } = {}) =>
  column({
    ...options,
    consume: (value: unknown) => (value === null || value === undefined ? null : Number(value)),
  })

/** BOOLEAN column (SQLite stores 0/1). */
export const booleanColumn = (options: { columnName?: string } = {}) =>
  column({
    ...options,
    consume: (value: unknown) => Boolean(value),
    prepare: (value: boolean) => Boolean(value),
  })

/** INTEGER column (PostgreSQL may hand BIGINT/SMALLINT back as strings). */
export const integerColumn = (options: { columnName?: string; isPrimary?: boolean } = {}) =>
  column({
    ...options,
    consume: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
  })
