/**
 * CSV as RFC 4180 writes it (comma, CRLF, quotes doubled inside quoted
 * cells), with the spreadsheet formula-injection guard: a text cell that
 * starts with = + - @ (or a tab or carriage return, which some spreadsheets
 * skip before reading a formula) gets a leading single quote, so a
 * merchant-supplied name like `=HYPERLINK(...)` is shown, never evaluated.
 */
const FORMULA_START = /^[=+\-@\t\r]/
const NEEDS_QUOTES = /[",\r\n]/

export type CsvValue = string | number | boolean | null | undefined

export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return ''
  // A JS number is never a formula; its minus sign stays a minus sign.
  let text = String(value)
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** One record, CRLF-terminated. */
export function csvRow(values: CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`
}
