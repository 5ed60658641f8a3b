import db from '@adonisjs/lucid/services/db'
import { insertedId } from '#tests/helpers/database'

/**
 * A raised event (`order.paid` at `info` unless told) and its delivery to
 * `target`, written as the notification workers write them at `at` (now
 * unless told); the event's id.
 */
export async function notificationDelivery(fields: {
  channel: string
  target: string
  status: string
  attempts?: number
  lastError?: string
  event?: string
  severity?: string
  at?: number
  nextAttemptAt?: number
}): Promise<number> {
  const now = fields.at ?? Date.now()
  const [event] = await db
    .table('notification_events')
    .insert({
      name: fields.event ?? 'order.paid',
      severity: fields.severity ?? 'info',
      data: '{}',
      forced: false,
      fanned_out: true,
      created_at: now,
    })
    .returning('id')
  const eventId = insertedId(event)
  await db.table('notification_deliveries').insert({
    event_id: eventId,
    channel: fields.channel,
    target: fields.target,
    status: fields.status,
    attempts: fields.attempts ?? 1,
    next_attempt_at: fields.nextAttemptAt ?? now,
    last_error: fields.lastError ?? '',
    delivered_at: fields.status === 'delivered' ? now : null,
    created_at: now,
    updated_at: now,
  })
  return eventId
}
