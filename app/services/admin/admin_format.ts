/**
 * How the console writes figures, amounts and times. Amounts stay decimal
 * strings (never a JS number); times are shown in UTC, the zone the
 * dashboard counts its days in.
 *
 * The functions with words in their output (utcTime, relativeTime,
 * duration) take the request's i18n (`ctx.i18n`, keys console.format.*)
 * as an optional last argument; without it they write English, as they
 * always did (ace commands, a chat bot's commands, callers not translated yet).
 */

/** What the console's word-writing functions need of an I18n (ctx.i18n). */
export type FormatI18n = { t(key: string, data?: Record<string, any>): string }

/** "1000014.213" → "1,000,014.213": digits grouped on the string itself. */
export function groupedDecimal(value: string): string {
  const [whole, fraction] = value.split('.')
  const sign = whole.startsWith('-') ? '-' : ''
  const digits = sign ? whole.slice(1) : whole
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${sign}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`
}

/** A count with thousands separators. */
export function groupedCount(value: number): string {
  return value.toLocaleString('en-US')
}

/** A ratio as a percentage with one decimal ("62.5 %"); "—" when there is none. */
export function percent(ratio: number | null): string {
  if (ratio === null) return '—'
  const value = Math.round(ratio * 1000) / 10
  return `${Number.isInteger(value) ? value.toFixed(0) : value.toFixed(1)} %`
}

/** "2025-06-15 12:00 UTC" ("—" for none). */
export function utcMinute(epochMs: number | null | undefined): string {
  if (epochMs === null || epochMs === undefined) return '—'
  return `${new Date(epochMs).toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/** "2025-06-15 12:00:07 UTC" ("—" for none): where attempts follow each other closely. */
export function utcSecond(epochMs: number | null | undefined): string {
  if (epochMs === null || epochMs === undefined) return '—'
  return `${new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

/** "2025-06-15 12:00 UTC", or "never". */
export function utcTime(epochMs: number | null, i18n?: FormatI18n): string {
  if (epochMs !== null) return utcMinute(epochMs)
  return i18n ? i18n.t('admin.format.never') : 'never'
}

/** "45 s", "12 min", "3 h", "4 d" (`size` as written: never grouped, decimals kept). */
function unit(unitName: 's' | 'min' | 'h' | 'd', size: number, i18n?: FormatI18n): string {
  if (!i18n) return `${size} ${unitName}`
  const key = { s: 'seconds', min: 'minutes', h: 'hours', d: 'days' }[unitName]
  return i18n.t(`admin.format.${key}`, { n: String(size) })
}

/** "just now", "45 s ago", "12 min ago", "3 h ago", "4 d ago" (or "in …" for a time ahead). */
export function relativeTime(epochMs: number | null, now: number, i18n?: FormatI18n): string {
  if (epochMs === null) return i18n ? i18n.t('admin.format.never') : 'never'
  const seconds = Math.round((now - epochMs) / 1000)
  const ahead = seconds < 0
  const size = Math.abs(seconds)
  let text: string
  if (size < 5) return i18n ? i18n.t('admin.format.just_now') : 'just now'
  if (size < 60) text = unit('s', size, i18n)
  else if (size < 3600) text = unit('min', Math.floor(size / 60), i18n)
  else if (size < 86_400) text = unit('h', Math.floor(size / 3600), i18n)
  else text = unit('d', Math.floor(size / 86_400), i18n)
  if (!i18n) return ahead ? `in ${text}` : `${text} ago`
  return i18n.t(ahead ? 'admin.format.ahead' : 'admin.format.ago', { time: text })
}

/** A duration in words: "≈ 2 min", "45 s", "3 h". */
export function duration(ms: number, i18n?: FormatI18n): string {
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return unit('s', seconds, i18n)
  if (seconds < 3600) return unit('min', Math.round(seconds / 60), i18n)
  if (seconds < 86_400) return unit('h', Math.round(seconds / 360) / 10, i18n)
  return unit('d', Math.round(seconds / 8640) / 10, i18n)
}
