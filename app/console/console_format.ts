/**
 * How the console writes times: UTC, to the minute (or the second where
 * attempts follow each other closely), the same on every page.
 */
export function utcMinute(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—'
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 16)} UTC`
}

export function utcSecond(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—'
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`
}
