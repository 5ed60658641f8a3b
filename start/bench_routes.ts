/*
|--------------------------------------------------------------------------
| Benchmark routes (BENCH_ROUTES=true only)
|--------------------------------------------------------------------------
|
| Registered by start/routes.ts only when BENCH_ROUTES=true (off by
| default, never for production): the baselines bench/create_orders.ts sets
| next to order creation, through the same HTTP stack, body parser and
| database connection:
|
|   POST /__bench/lucid-insert   one INSERT through Lucid's query builder
|   POST /__bench/raw-insert     one INSERT through db.rawQuery
|   GET  /__bench/statements     SQL statements sent so far (BEGIN/COMMIT
|                                included), counted from knex's `query` event
|
| The rows go to a table of their own, bench_inserts, created on first use.
*/
import router from '@adonisjs/core/services/router'
import db from '@adonisjs/lucid/services/db'
import type { HttpContext } from '@adonisjs/core/http'
import { ok } from '#support/http/envelope'

let statements = 0
const connection = db.connection()
const writeClient = connection.getWriteClient()
writeClient.on('query', () => statements++)
if (connection.getReadClient() !== writeClient)
  connection.getReadClient().on('query', () => statements++)

let table: Promise<unknown> | null = null
function benchTable() {
  table ??= Promise.resolve(
    db
      .rawQuery(
        connection.dialect.name === 'postgres'
          ? 'CREATE TABLE IF NOT EXISTS bench_inserts (id bigserial PRIMARY KEY, order_id varchar(32) NOT NULL, amount numeric(20, 4) NOT NULL, created_at bigint NOT NULL)'
          : 'CREATE TABLE IF NOT EXISTS bench_inserts (id integer PRIMARY KEY AUTOINCREMENT, order_id varchar(32) NOT NULL, amount numeric NOT NULL, created_at bigint NOT NULL)'
      )
      .then(() => undefined)
  )
  return table
}

function fields(ctx: HttpContext) {
  const body = ctx.request.body()
  return {
    order_id: String(body.order_id ?? ''),
    amount: String(body.amount ?? '0'),
    created_at: Date.now(),
  }
}

router
  .group(() => {
    router.post('/lucid-insert', async (ctx) => {
      await benchTable()
      await db.table('bench_inserts').insert(fields(ctx))
      return ok(ctx, null)
    })
    router.post('/raw-insert', async (ctx) => {
      await benchTable()
      const row = fields(ctx)
      await db.rawQuery(
        'INSERT INTO bench_inserts (order_id, amount, created_at) VALUES (?, ?, ?)',
        [row.order_id, row.amount, row.created_at]
      )
      return ok(ctx, null)
    })
    router.get('/statements', async (ctx) => ok(ctx, { statements }))
  })
  .prefix('/__bench')
