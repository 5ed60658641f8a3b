import type { AuditFilters } from '#services/audit/audit_log'

/**
 * The audit page's filters, read from its query string (a GET form: a
 * refusal is shown on the page itself, next to the field, with no result,
 * never as an error page). Every field is optional; an empty one filters
 * nothing.
 */
export const AUDIT_FILTER_FIELDS = [
  'actor',
  'action',
  'subject_type',
  'subject_id',
  'ip',
  'from',
  'to',
] as const
export type AuditFilterField = (typeof AUDIT_FILTER_FIELDS)[number]
export type AuditFilterValues = Record<AuditFilterField, string>

export type AuditFilterResult = {
  /** What the form shows again (trimmed). */
  values: AuditFilterValues
  filters: AuditFilters
  /** Message per refused field. */
  errors: Partial<Record<AuditFilterField, string>>
  /** Where the page continues (keyset cursor of the previous page's last row). */
  after: string | null
  /** Some filter is set. */
  active: boolean
}

const MAX_LENGTH: Record<AuditFilterField, number> = {
  actor: 280,
  action: 65,
  subject_type: 32,
  subject_id: 255,
  ip: 64,
  from: 10,
  to: 10,
}

const DAY_MS = 86_400_000
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/** Start of a YYYY-MM-DD day in UTC (the console's days), or null for an impossible date. */
function dayStart(date: string): number | null {
  const match = DATE.exec(date)
  if (!match) return null
  const [year, month, day] = match.slice(1).map(Number)
  const time = Date.UTC(year, month - 1, day)
  const back = new Date(time)
  return back.getUTCFullYear() === year &&
    back.getUTCMonth() === month - 1 &&
    back.getUTCDate() === day
    ? time
    : null
}

function text(value: unknown): string {
  const first = Array.isArray(value) ? value[0] : value
  return typeof first === 'string' ? first.trim() : ''
}

export function readAuditFilters(query: Record<string, unknown>): AuditFilterResult {
  const values = Object.fromEntries(
    AUDIT_FILTER_FIELDS.map((field) => [field, text(query[field])])
  ) as AuditFilterValues
  const errors: AuditFilterResult['errors'] = {}
  for (const field of AUDIT_FILTER_FIELDS) {
    if (values[field].length > MAX_LENGTH[field])
      errors[field] = `At most ${MAX_LENGTH[field]} characters.`
  }

  const filters: AuditFilters = {}
  // E-mails are stored lower-case (sign-in is case-insensitive); shell users keep their case.
  if (values.actor)
    filters.actor = values.actor.includes('@') ? values.actor.toLowerCase() : values.actor
  if (values.action.endsWith('*')) {
    if (values.action.length > 1) filters.actionPrefix = values.action.slice(0, -1)
  } else if (values.action) {
    filters.action = values.action
  }
  if (values.subject_type) filters.subjectType = values.subject_type
  if (values.subject_id) filters.subjectId = values.subject_id
  if (values.ip) filters.ip = values.ip

  for (const field of ['from', 'to'] as const) {
    if (!values[field] || errors[field]) continue
    const start = dayStart(values[field])
    if (start === null) {
      errors[field] = 'Use a date like 2025-06-15 (year-month-day).'
      continue
    }
    if (field === 'from') filters.since = start
    else filters.until = start + DAY_MS
  }
  if (
    filters.since !== undefined &&
    filters.until !== undefined &&
    filters.until <= filters.since
  ) {
    errors.to = 'The end date is before the start date.'
  }

  const after = text(query.after)
  return {
    values,
    filters,
    errors,
    after: after && after.length <= 200 ? after : null,
    active: AUDIT_FILTER_FIELDS.some((field) => values[field] !== ''),
  }
}

/** The audit page's query string for these values (empty ones left out), continuing after `after` when given. */
export function auditQuery(values: AuditFilterValues, after?: string | null): string {
  const params = new URLSearchParams()
  for (const field of AUDIT_FILTER_FIELDS) if (values[field]) params.set(field, values[field])
  if (after) params.set('after', after)
  const query = params.toString()
  return query ? `?${query}` : ''
}
