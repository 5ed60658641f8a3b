import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteWriter, type SqliteFollowUp, type SqliteStep } from '#services/sqlite_writer'

/** Which database this run is on (bin/test.ts: DB_CONNECTION, SQLite by default). */
const onPostgres = process.env.DB_CONNECTION === 'pg'
const ONLY_SQLITE = 'SQLite only (PostgreSQL creates an order in one statement, no writer thread)'

/**
 * A write like the order's: a parent row (RETURNING its id), then a child
 * row carrying that id. Unique `k` on both, and a deferred foreign key on
 * the child's `other` (checked at COMMIT only).
 */
function write(
  parentKey: string,
  childKey = parentKey,
  other: number | null = null
): [SqliteStep, SqliteFollowUp] {
  return [
    { sql: 'INSERT INTO writer_parents (k) VALUES (?) RETURNING id, k', bindings: [parentKey] },
    {
      sql: 'INSERT INTO writer_children (parent_id, k, other) VALUES (?, ?, ?)',
      bindings: [{ fromRow: 'id' }, childKey, other === null ? 'none' : other],
    },
  ]
}

async function keys(table: string): Promise<string[]> {
  return (await db.from(table).orderBy('k').select('k')).map((row: { k: string }) => row.k)
}

test.group('SQLite writer thread', (group) => {
  let writer: SqliteWriter
  let statements: string[]

  group.each.setup(async () => {
    if (onPostgres) return async () => {}
    await db.rawQuery('DROP TABLE IF EXISTS writer_children')
    await db.rawQuery('DROP TABLE IF EXISTS writer_parents')
    await db.rawQuery(
      'CREATE TABLE writer_parents (id INTEGER PRIMARY KEY AUTOINCREMENT, k TEXT NOT NULL UNIQUE)'
    )
    await db.rawQuery(
      `CREATE TABLE writer_children (parent_id INTEGER NOT NULL REFERENCES writer_parents(id), k TEXT NOT NULL UNIQUE,
        other TEXT REFERENCES writer_parents(k) DEFERRABLE INITIALLY DEFERRED)`
    )
    await db.rawQuery(`INSERT INTO writer_parents (k) VALUES ('none')`)
    statements = []
    writer = new SqliteWriter(
      () => app.makePath(process.env.SQLITE_PATH!),
      (sql) => statements.push(sql)
    )
    return async () => {
      await writer.close()
      await db.rawQuery('DROP TABLE IF EXISTS writer_children')
      await db.rawQuery('DROP TABLE IF EXISTS writer_parents')
    }
  })

  test('a write alone: BEGIN IMMEDIATE, its two statements, COMMIT; the row read back', async ({
    assert,
  }) => {
    const row = await writer.write(...write('a'))
    assert.equal(row?.k, 'a')
    assert.deepEqual(await keys('writer_children'), ['a'])
    assert.deepEqual(
      statements.map((sql) => sql.split(' ').slice(0, 3).join(' ')),
      ['BEGIN IMMEDIATE', 'INSERT INTO writer_parents', 'INSERT INTO writer_children', 'COMMIT']
    )
  }).skip(onPostgres, ONLY_SQLITE)

  test('writes handed together share one transaction; one that fails is undone alone and answered with its error', async ({
    assert,
  }) => {
    await writer.write(...write('taken'))
    statements = []
    // Held, then released: the four reach the thread in one message, whatever the machine's load.
    const release = writer.hold()
    const handed = Promise.allSettled([
      writer.write(...write('b')),
      writer.write(...write('taken')), // the parent's unique key: its first statement fails
      writer.write(...write('c', 'b')), // its parent goes in, its child's key is taken: the parent must go too
      writer.write(...write('d')),
    ])
    assert.equal(writer.pending, 4)
    release()
    const results = await handed
    assert.deepEqual(
      results.map((result) => result.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled']
    )
    assert.equal((results[1] as PromiseRejectedResult).reason.code, 'SQLITE_CONSTRAINT_UNIQUE')
    assert.equal((results[2] as PromiseRejectedResult).reason.code, 'SQLITE_CONSTRAINT_UNIQUE')
    // Nothing half-written: no parent without its child.
    assert.deepEqual(await keys('writer_parents'), ['b', 'd', 'none', 'taken'])
    assert.deepEqual(await keys('writer_children'), ['b', 'd', 'taken'])
    // One transaction for the four, a savepoint each.
    assert.equal(statements.filter((sql) => sql === 'BEGIN IMMEDIATE').length, 1)
    assert.equal(statements.filter((sql) => sql === 'COMMIT').length, 1)
    assert.equal(statements.filter((sql) => sql === 'SAVEPOINT w').length, 4)
    assert.equal(statements.filter((sql) => sql === 'ROLLBACK TO w').length, 2)
  }).skip(onPostgres, ONLY_SQLITE)

  test('a write alone whose second statement fails leaves nothing', async ({ assert }) => {
    await writer.write(...write('x'))
    await assert.rejects(() => writer.write(...write('y', 'x')), /UNIQUE constraint failed/)
    assert.deepEqual(await keys('writer_parents'), ['none', 'x'])
    assert.deepEqual(await keys('writer_children'), ['x'])
  }).skip(onPostgres, ONLY_SQLITE)

  test('when COMMIT fails, every write of the batch is answered with the error and none is kept', async ({
    assert,
  }) => {
    // The second write's child names a parent that does not exist through a deferred
    // foreign key: its statements succeed, the COMMIT of the batch is refused.
    const release = writer.hold()
    const handed = Promise.allSettled([
      writer.write(...write('p')),
      writer.write(...write('q', 'q', 424242)),
    ])
    release()
    const results = await handed
    assert.deepEqual(
      results.map((result) => result.status),
      ['rejected', 'rejected']
    )
    for (const result of results)
      assert.equal((result as PromiseRejectedResult).reason.code, 'SQLITE_CONSTRAINT_FOREIGNKEY')
    assert.deepEqual(await keys('writer_parents'), ['none'])
    assert.deepEqual(await keys('writer_children'), [])
    // The thread goes on: the next write commits.
    assert.equal((await writer.write(...write('r')))?.k, 'r')
  }).skip(onPostgres, ONLY_SQLITE)

  test('writes handed while held wait for the release, then go in one transaction', async ({
    assert,
  }) => {
    const release = writer.hold()
    const handed = ['h1', 'h2', 'h3'].map((key) => writer.write(...write(key)))
    // Nothing reaches the thread while held: a read through another connection sees no row.
    await db.from('writer_parents').where('k', 'h1').first()
    assert.deepEqual(await keys('writer_children'), [])
    assert.throws(() => writer.hold(), /already held/)
    release()
    assert.deepEqual(
      (await Promise.all(handed)).map((row) => row?.k),
      ['h1', 'h2', 'h3']
    )
    assert.equal(statements.filter((sql) => sql === 'BEGIN IMMEDIATE').length, 1)
    assert.equal(statements.filter((sql) => sql === 'SAVEPOINT w').length, 3)
    assert.deepEqual(await keys('writer_children'), ['h1', 'h2', 'h3'])
  }).skip(onPostgres, ONLY_SQLITE)

  test('close() answers the writes handed before it, then stops the thread; a later write starts it again', async ({
    assert,
  }) => {
    const handed = ['m1', 'm2', 'm3'].map((key) => writer.write(...write(key)))
    assert.equal(writer.pending, 3)
    await writer.close()
    assert.equal(writer.pending, 0)
    assert.deepEqual(
      (await Promise.all(handed)).map((row) => row?.k),
      ['m1', 'm2', 'm3']
    )
    assert.equal((await writer.write(...write('m4')))?.k, 'm4')
    assert.deepEqual(await keys('writer_children'), ['m1', 'm2', 'm3', 'm4'])
  }).skip(onPostgres, ONLY_SQLITE)

  test('a script whose only work is a write waits for its answer; an idle thread does not keep a process alive', ({
    assert,
  }) => {
    const dir = mkdtempSync(join(tmpdir(), 'writer-alone-'))
    try {
      const result = spawnSync(
        process.execPath,
        [
          '--import=@poppinss/ts-exec',
          'tests/fixtures/sqlite_writer_alone.ts',
          join(dir, 'alone.sqlite3'),
        ],
        { cwd: app.makePath(), encoding: 'utf8', timeout: 30_000 }
      )
      // Exit code 0 after printing: the process neither left before the answer (13, an
      // unsettled top-level await) nor stayed for the idle thread (killed at the timeout).
      assert.equal(result.status, 0, result.stderr)
      assert.deepEqual(JSON.parse(result.stdout), { id: 1, k: 'alone' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }).skip(onPostgres, ONLY_SQLITE)
})
