import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  async up() {
    // A parent completed in place from a placeholder (status 4 → 1): a later
    // selection of the same target marks it is_selected.
    this.schema.alterTable('orders', (table) => {
      table.boolean('was_placeholder').notNullable().defaultTo(false)
    })

    // Every transaction reference that paid an order: a reference pays one
    // order only (10007).
    this.schema.createTable('payment_references', (table) => {
      table.bigIncrements('id')
      table.string('network', 32).notNullable()
      table.string('reference', 255).notNullable()
      table.bigInteger('order_id').unsigned().notNullable().references('id').inTable('orders')
      table.string('source', 16).notNullable()
      table.bigInteger('created_at').notNullable()
      table.unique(['network', 'reference'])
    })

    // Outbox of merchant callbacks: written in the transaction that marks the
    // order paid, delivered (at least once) by the callbacks job.
    this.schema.createTable('callbacks', (table) => {
      table.bigIncrements('id')
      table
        .bigInteger('order_id')
        .unsigned()
        .notNullable()
        .unique()
        .references('id')
        .inTable('orders')
      table.string('format', 16).notNullable()
      table.string('status', 16).notNullable().defaultTo('pending')
      table.integer('attempts').notNullable().defaultTo(0)
      table.bigInteger('next_attempt_at').notNullable()
      // Lease of the worker delivering it; an expired lease is free again,
      // so a crash mid-delivery only delays the callback.
      table.string('locked_by', 255).nullable()
      table.bigInteger('locked_until').nullable()
      table.integer('last_http_status').nullable()
      table.text('last_error').notNullable().defaultTo('')
      table.bigInteger('delivered_at').nullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.index(['status', 'next_attempt_at'])
    })

    this.schema.createTable('callback_attempts', (table) => {
      table.bigIncrements('id')
      table
        .bigInteger('callback_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('callbacks')
        .onDelete('CASCADE')
      table.integer('attempt').notNullable()
      table.bigInteger('started_at').notNullable()
      table.string('method', 8).notNullable()
      table.text('url').notNullable()
      table.integer('http_status').nullable()
      table.text('response_excerpt').notNullable().defaultTo('')
      table.text('error').notNullable().defaultTo('')
      table.integer('duration_ms').notNullable()
      table.boolean('acknowledged').notNullable().defaultTo(false)
      table.index(['callback_id'])
    })

    // Payments handed to the hosted provider (creating → pending → paid /
    // failed / expired). unique_id is our trade_id; the order row may not
    // exist yet while the link is being created.
    this.schema.createTable('provider_orders', (table) => {
      table.bigIncrements('id')
      table.string('provider', 32).notNullable()
      table.string('unique_id', 32).notNullable().unique()
      table.bigInteger('order_id').unsigned().nullable().unique().references('id').inTable('orders')
      table.string('provider_order_id', 128).notNullable().defaultTo('')
      table.string('status', 16).notNullable()
      table.string('coin', 16).notNullable()
      table.decimal('amount', 30, 8).notNullable()
      table.text('pay_url').notNullable().defaultTo('')
      table.text('error').notNullable().defaultTo('')
      table.text('response_raw').notNullable().defaultTo('')
      table.text('notify_raw').notNullable().defaultTo('')
      table.bigInteger('notified_at').nullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
    })
  }

  async down() {
    this.schema.dropTableIfExists('provider_orders')
    this.schema.dropTableIfExists('callback_attempts')
    this.schema.dropTableIfExists('callbacks')
    this.schema.dropTableIfExists('payment_references')
    this.schema.alterTable('orders', (table) => {
      table.dropColumn('was_placeholder')
    })
  }
}
