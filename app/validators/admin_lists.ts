import vine from '@vinejs/vine'
import { CALLBACK_LIST_STATUSES, type CallbackFilters } from '#services/admin/callback_outbox_query'
import {
  UNMATCHED_STATES,
  type UnmatchedFilters,
} from '#services/operators/unmatched_payment_admin'

/**
 * The filters of the console's callback and unmatched-payment lists, as a
 * GET form sends them (and as the batch redelivery posts them back). An
 * empty field means "any": empty strings are dropped before validation.
 */
const DAY = /^\d{4}-\d{2}-\d{2}$/

const callbackFilterSchema = vine.compile(
  vine.object({
    status: vine.enum(CALLBACK_LIST_STATUSES).optional(),
    pid: vine.string().trim().maxLength(32).optional(),
    network: vine.string().trim().toLowerCase().maxLength(32).optional(),
    from: vine.string().regex(DAY).optional(),
    to: vine.string().regex(DAY).optional(),
    q: vine.string().trim().maxLength(128).optional(),
    after: vine
      .string()
      .regex(/^\d{1,18}$/)
      .optional(),
  })
)

const unmatchedFilterSchema = vine.compile(
  vine.object({
    state: vine.enum([...UNMATCHED_STATES, 'all'] as const).optional(),
    network: vine.string().trim().toLowerCase().maxLength(32).optional(),
    token: vine.string().trim().toUpperCase().maxLength(16).optional(),
    after: vine
      .string()
      .regex(/^\d{1,18}$/)
      .optional(),
  })
)

/** Blank values go to the service, which says what is missing in plain words. */
export const assignForm = vine.compile(
  vine.object({ trade_id: vine.string().trim().maxLength(64) })
)
export const dismissForm = vine.compile(vine.object({ note: vine.string().trim().maxLength(2000) }))

function withoutEmpty(input: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(input)) {
    if (typeof value === 'string' && value.trim() === '') continue
    kept[name] = value
  }
  return kept
}

/** Midnight UTC of a YYYY-MM-DD day, or null for a day that does not exist (2024-02-30). */
function utcDay(day: string): number | null {
  const time = Date.parse(`${day}T00:00:00Z`)
  return Number.isNaN(time) || new Date(time).toISOString().slice(0, 10) !== day ? null : time
}

export type CallbackListQuery = {
  filters: CallbackFilters
  /** The filters as the form shows them (and as links carry them). */
  form: { status: string; pid: string; network: string; from: string; to: string; q: string }
  after: string | null
  /** A day that does not exist, named for the page's message; the filter is left out. */
  invalidDays: string[]
}

/** Reads the callback list's query string (`from`/`to`: UTC days, both included). */
export async function callbackListQuery(
  input: Record<string, unknown>
): Promise<CallbackListQuery> {
  const data = await callbackFilterSchema.validate(withoutEmpty(input))
  const filters: CallbackFilters = {}
  const invalidDays: string[] = []
  if (data.status) filters.status = data.status
  if (data.pid) filters.pid = data.pid
  if (data.network) filters.network = data.network
  if (data.q) filters.search = data.q
  if (data.from) {
    const since = utcDay(data.from)
    if (since === null) invalidDays.push(data.from)
    else filters.since = since
  }
  if (data.to) {
    const day = utcDay(data.to)
    if (day === null) invalidDays.push(data.to)
    else filters.until = day + 86_400_000
  }
  return {
    filters,
    form: {
      status: data.status ?? '',
      pid: data.pid ?? '',
      network: data.network ?? '',
      from: data.from ?? '',
      to: data.to ?? '',
      q: data.q ?? '',
    },
    after: data.after ?? null,
    invalidDays,
  }
}

export type UnmatchedListQuery = {
  filters: UnmatchedFilters
  form: { state: string; network: string; token: string }
  after: string | null
}

/** Reads the unmatched list's query string; without a state, the open ones are shown. */
export async function unmatchedListQuery(
  input: Record<string, unknown>
): Promise<UnmatchedListQuery> {
  const data = await unmatchedFilterSchema.validate(withoutEmpty(input))
  const state = data.state ?? 'open'
  const filters: UnmatchedFilters = {}
  if (state !== 'all') filters.state = state
  if (data.network) filters.network = data.network
  if (data.token) filters.token = data.token
  return {
    filters,
    form: { state, network: data.network ?? '', token: data.token ?? '' },
    after: data.after ?? null,
  }
}
