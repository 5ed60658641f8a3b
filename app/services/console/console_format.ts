/**
 * How the console writes figures, amounts and times. Amounts stay decimal
 * strings (never a JS number); times are shown in UTC, the zone the
 * dashboard counts its days in.
 */

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
export function utcTime(epochMs: number | null): string {
  return epochMs === null ? 'never' : utcMinute(epochMs)
}

/** "just now", "45 s ago", "12 min ago", "3 h ago", "4 d ago" (or "in …" for a time ahead). */
export function relativeTime(epochMs: number | null, now: number): string {
  if (epochMs === null) return 'never'
  const seconds = Math.round((now - epochMs) / 1000)
  const ahead = seconds < 0
  const size = Math.abs(seconds)
  let text: string
  if (size < 5) return 'just now'
  if (size < 60) text = `${size} s`
  else if (size < 3600) text = `${Math.floor(size / 60)} min`
  else if (size < 86_400) text = `${Math.floor(size / 3600)} h`
  else text = `${Math.floor(size / 86_400)} d`
  return ahead ? `in ${text}` : `${text} ago`
}

/** A duration in words: "≈ 2 min", "45 s", "3 h". */
export function duration(ms: number): string {
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds} s`
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`
  if (seconds < 86_400) return `${Math.round(seconds / 360) / 10} h`
  return `${Math.round(seconds / 8640) / 10} d`
}
