import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  async up() {
    this.schema.createTable('orders', (table) => {
      table.bigIncrements('id')
      table.string('trade_id', 32).notNullable().unique()
      table.string('order_id', 32).notNullable()
      table.bigInteger('parent_id').unsigned().nullable().references('id').inTable('orders')
      table.integer('api_key_id').unsigned().nullable().references('id').inTable('api_keys')
      table.string('pid', 32).notNullable()
      table.string('payment_type', 16).notNullable()
      // The compat request's `type` (echoed in compat callbacks).
      table.string('compat_type', 64).notNullable().defaultTo('')
      table.string('name', 255).notNullable().defaultTo('')
      table.string('currency', 10).notNullable()
      table.decimal('amount', 20, 4).notNullable()
      table.string('token', 16).notNullable().defaultTo('')
      table.string('network', 32).notNullable().defaultTo('')
      table.string('receive_address', 128).notNullable().defaultTo('')
      table.decimal('actual_amount', 30, 8).notNullable().defaultTo(0)
      table.smallint('status').notNullable()
      table.boolean('is_selected').notNullable().defaultTo(false)
      table.string('pay_provider', 32).notNullable().defaultTo('')
      // Hosted provider link; on-chain orders use the cashier URL instead.
      table.text('payment_url').notNullable().defaultTo('')
      table.text('redirect_url').notNullable().defaultTo('')
      table.text('notify_url').notNullable()
      table.string('block_transaction_id', 255).notNullable().defaultTo('')
      table.bigInteger('expiration_time').notNullable()
      table.bigInteger('paid_at').nullable()
      table.string('callback_status', 16).notNullable().defaultTo('none')
      table.integer('callback_attempts').notNullable().defaultTo(0)
      table.bigInteger('callback_last_at').nullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()

      // A parent has at most one child (NULLs never collide).
      table.unique(['parent_id'])
      table.index(['status', 'expiration_time'])
      table.index(['network', 'receive_address', 'token'])
    })

    // order_id is unique among the merchant's orders; a child repeats its
    // parent's order_id, so children are left out of the index.
    this.schema.raw(
      'CREATE UNIQUE INDEX orders_order_id_unique ON orders (order_id) WHERE parent_id IS NULL'
    )

    this.schema.createTable('amount_locks', (table) => {
      table.bigIncrements('id')
      table.string('network', 32).notNullable()
      table.string('address', 128).notNullable()
      table.string('token', 16).notNullable()
      table.decimal('amount', 30, 8).notNullable()
      table
        .bigInteger('order_id')
        .unsigned()
        .notNullable()
        .unique()
        .references('id')
        .inTable('orders')
        .onDelete('CASCADE')
      table.bigInteger('expires_at').notNullable()
      table.bigInteger('created_at').notNullable()
      // The rule that makes every payment attributable: one active order
      // per (network, address, token, amount). A lock row exists only while
      // it is active; releasing it deletes it.
      table.unique(['network', 'address', 'token', 'amount'])
      table.index(['expires_at'])
    })
  }

  async down() {
    this.schema.dropTableIfExists('amount_locks')
    this.schema.dropTableIfExists('orders')
  }
}
