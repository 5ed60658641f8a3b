import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { SEVERITIES, type Severity } from '#notifications/notification_channel'
import { eventDefinition } from '#notifications/notification_events'

type Client = QueryClientContract | TransactionClientContract

export type RaiseOptions = {
  /** Instead of the event's usual one. */
  severity?: Severity
  /** Raised once: a second raise with the same key is ignored (a scanner stalled since …, a day's report). */
  dedupeKey?: string
  /** Only to this channel (and target): a test message, a fold's summary. */
  only?: { channel: string; target?: string }
  /** Sent even where the channel's rules (on, events, severity) would not: a test message. */
  force?: boolean
}

/** Whether `event` is among a channel's `notify.<channel>.events` (names, `prefix.*`, `*`). */
export function eventSelected(patterns: string[], event: string): boolean {
  return patterns.some(
    (pattern) =>
      pattern === '*' ||
      pattern === event ||
      (pattern.endsWith('.*') && event.startsWith(pattern.slice(0, -1)))
  )
}

export const severityRank = (severity: Severity) => SEVERITIES.indexOf(severity)

function isTransaction(client: Client): client is TransactionClientContract {
  return (client as TransactionClientContract).isTransaction === true
}

/** Wakes the delivery loop of this process (set by it: no import cycle). */
let wake: () => void = () => {}
export function onNotificationQueued(callback: () => void) {
  wake = callback
}

/**
 * Raises an event: one notification_events row, written with `client`
 * (the caller's transaction: the event and what caused it commit
 * together, or neither). Nothing else happens here (no setting is read,
 * no channel asked): the workers decide which channels and targets get it,
 * after the commit (app/notifications/notification_delivery.ts), so a
 * raise costs a payment or a callback attempt one INSERT. Returns the
 * event's id, or null when a raise with the same dedupe key came first.
 */
export async function raiseNotification(
  name: string,
  data: Record<string, unknown>,
  options: RaiseOptions = {},
  client: Client = db.connection()
): Promise<number | null> {
  const severity = options.severity ?? eventDefinition(name).severity
  const query = client
    .knexQuery()
    .table('notification_events')
    .insert({
      name,
      severity,
      dedupe_key: options.dedupeKey ?? null,
      data: JSON.stringify(data),
      only_channel: options.only?.channel ?? null,
      only_target: options.only?.target ?? null,
      forced: options.force === true,
      fanned_out: false,
      created_at: Date.now(),
    })
  if (options.dedupeKey) query.onConflict('dedupe_key').ignore()
  const inserted: ({ id: number } | number)[] = await query.returning('id')
  if (inserted.length === 0) return null
  const first = inserted[0]
  if (isTransaction(client)) client.after('commit', () => wake())
  else wake()
  return Number(typeof first === 'object' ? first.id : first)
}
