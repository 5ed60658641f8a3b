import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The operators' notifications (app/notifications/): each event raised is
 * one notification_events row, written in the transaction that raised it;
 * a worker then writes one notification_deliveries row per channel and
 * target its rules send it to: the outbox it delivers from (leases,
 * retries, at least once).
 * notification_targets holds the targets a channel stopped (a Telegram
 * chat that blocked the bot) until an operator clears them.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('notification_events', (table) => {
      table.bigIncrements('id')
      table.string('name', 64).notNullable()
      table.string('severity', 16).notNullable()
      // An event raised once per occurrence (a scanner stalled since …, a day's report).
      table.string('dedupe_key', 191).nullable().unique()
      table.text('data').notNullable()
      // Only to this channel (and target), and whether its rules are passed over: a test message, a fold's summary.
      table.string('only_channel', 32).nullable()
      table.string('only_target', 255).nullable()
      table.boolean('forced').notNullable().defaultTo(false)
      // Its deliveries written (by a worker, after the raising transaction committed).
      table.boolean('fanned_out').notNullable().defaultTo(false)
      table.bigInteger('created_at').notNullable()
      table.index(['created_at'])
      table.index(['fanned_out', 'id'])
    })

    this.schema.createTable('notification_deliveries', (table) => {
      table.bigIncrements('id')
      table
        .bigInteger('event_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('notification_events')
        .onDelete('CASCADE')
      table.string('channel', 32).notNullable()
      table.string('target', 255).notNullable()
      // pending, delivered, failed, folded (over the hourly cap; told in a summary)
      table.string('status', 16).notNullable().defaultTo('pending')
      table.integer('attempts').notNullable().defaultTo(0)
      table.bigInteger('next_attempt_at').notNullable()
      table.string('locked_by', 255).nullable()
      table.bigInteger('locked_until').nullable()
      table.text('last_error').notNullable().defaultTo('')
      table.bigInteger('delivered_at').nullable()
      // A folded delivery, once told in a notifications.folded summary.
      table.boolean('summarized').notNullable().defaultTo(false)
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.unique(['event_id', 'channel', 'target'])
      table.index(['status', 'next_attempt_at'])
      table.index(['channel', 'target', 'status', 'delivered_at'])
    })

    this.schema.createTable('notification_targets', (table) => {
      table.bigIncrements('id')
      table.string('channel', 32).notNullable()
      table.string('target', 255).notNullable()
      table.text('reason').notNullable()
      table.bigInteger('stopped_at').notNullable()
      table.unique(['channel', 'target'])
    })
  }

  async down() {
    this.schema.dropTable('notification_deliveries')
    this.schema.dropTable('notification_events')
    this.schema.dropTable('notification_targets')
  }
}
