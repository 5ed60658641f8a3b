import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  accessSync,
  constants,
} from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { test } from '@japa/runner'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { resetDatabase } from '#tests/helpers/database'
import { runAce, startServerProcess } from '#tests/helpers/processes'
import { waitFor } from '#tests/helpers/ops'
import { releaseMigrations, shortName } from '#services/backup/schema_version'

/**
 * db:backup and db:restore, run as the operator runs them (`node ace` in a
 * process of its own), against the test database and further databases
 * named after it (`<test db>_<name>`: a file beside it on SQLite, a
 * database on the same server on PostgreSQL).
 */

const isPg = () => db.connection().dialect.name === 'postgres'

/**
 * Where the files of these tests go (removed at the end): one folder per
 * run (named after its port), so that two suites side by side in one
 * checkout (.ci/run runs several) do not remove each other's files.
 */
const work = () => app.makePath('storage', `helper_backup_files_${process.env.PORT}`)

/** The environment of a command run against the database `name` (not the test database). */
function other(name: string): Record<string, string> {
  if (isPg()) return { PG_DB_NAME: `${process.env.PG_DB_NAME}_${name}` }
  return { SQLITE_PATH: process.env.SQLITE_PATH!.replace(/\.sqlite3$/, '') + `_${name}.sqlite3` }
}

/** Drops the database `name` (PostgreSQL: creates it empty again; SQLite: no file at all). */
async function freshDatabase(name: string) {
  if (isPg()) {
    const database = other(name).PG_DB_NAME
    await db.rawQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
    await db.rawQuery(`CREATE DATABASE "${database}"`)
    return
  }
  const file = app.makePath(other(name).SQLITE_PATH)
  for (const suffix of ['', '-wal', '-shm', '-journal', '.migrating'])
    rmSync(`${file}${suffix}`, { force: true })
}

async function dropDatabase(name: string) {
  if (isPg()) await db.rawQuery(`DROP DATABASE IF EXISTS "${other(name).PG_DB_NAME}" WITH (FORCE)`)
  else await freshDatabase(name)
}

/** A Lucid connection to the database `name`, for reading it; closed by the callback's end. */
async function reading<T>(
  name: string,
  read: (client: ReturnType<typeof db.connection>) => Promise<T>
): Promise<T> {
  const base = db.getRawConnection(db.primaryConnectionName)!.config as any
  const connectionName = `helper_backup_${name}`
  const config = isPg()
    ? { ...base, connection: { ...base.connection, database: other(name).PG_DB_NAME } }
    : {
        ...base,
        connection: { ...base.connection, filename: app.makePath(other(name).SQLITE_PATH) },
      }
  db.manager.add(connectionName, config)
  try {
    return await read(db.connection(connectionName))
  } finally {
    await db.manager.close(connectionName, true)
  }
}

type Rows = { orders: Record<string, unknown>[]; callbacks: Record<string, unknown>[] }

async function ordersAndCallbacks(client: ReturnType<typeof db.connection>): Promise<Rows> {
  return {
    orders: await client.from('orders').orderBy('id').select('*'),
    callbacks: await client.from('callbacks').orderBy('id').select('*'),
  }
}

let written = 0
/** One order and its callback, in one transaction (as the gateway writes a paid order and its outbox row). */
async function writeOrderWithCallback() {
  const index = ++written
  const now = Date.now()
  await db.transaction(async (trx) => {
    const [row] = await trx
      .table('orders')
      .insert({
        trade_id: `TB${String(index).padStart(10, '0')}`,
        order_id: `backup-${index}`,
        pid: '1000',
        payment_type: 'Native',
        status: 2,
        network: 'tron',
        token: 'USDT',
        receive_address: 'TAddress0',
        block_transaction_id: `tx-${index}`,
        name: `order ${index}`,
        currency: 'CNY',
        amount: '10.5',
        actual_amount: '1.45',
        notify_url: 'http://merchant.test/notify',
        expiration_time: now + 600_000,
        paid_at: now,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
    const orderId = Number(typeof row === 'object' ? row.id : row)
    await trx.table('callbacks').insert({
      order_id: orderId,
      format: 'native',
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      last_error: '',
      created_at: now,
      updated_at: now,
    })
  })
}

function backupPath(name: string) {
  return join(work(), `${name}.${isPg() ? 'dump' : 'sqlite3'}`)
}

/** Files of `directory` other than the ones named: a partial left behind shows up here. */
function leftovers(directory: string, expected: string[] = []) {
  return readdirSync(directory).filter((file) => !expected.includes(file))
}

async function backUp(file: string, env: Record<string, string | undefined> = {}) {
  return runAce(['db:backup', '--to', file], env)
}

async function restore(file: string, name: string, ...extra: string[]) {
  return runAce(['db:restore', file, ...extra], other(name))
}

test.group('db:backup and db:restore', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    written = 0
    rmSync(work(), { recursive: true, force: true })
    mkdirSync(work(), { recursive: true })
  })
  group.teardown(async () => {
    rmSync(work(), { recursive: true, force: true })
    for (const name of ['fresh', 'live', 'old', 'foreign']) await dropDatabase(name)
  })

  test('a backup taken while orders and callbacks are written holds one moment of them, whole', async ({
    assert,
  }) => {
    const file = backupPath('busy')
    let stop = false
    let failure: unknown = null
    const loop = (async () => {
      while (!stop) {
        await writeOrderWithCallback()
        // SQLite's driver answers without a turn of the event loop: let the timers (the polls) run.
        await new Promise((resolve) => setImmediate(resolve))
      }
    })().catch((error) => (failure = error))
    try {
      await waitFor(() => written >= 20, 'writes before the backup')
      const before = written
      const result = await backUp(file)
      const after = written
      // The writes went on while the backup was taken, and after it.
      await waitFor(() => written >= after + 5, 'writes after the backup')
      stop = true
      await loop
      assert.isNull(failure)
      assert.equal(result.code, 0, result.stderr + result.stdout)

      const release = await releaseMigrations(app)
      assert.include(result.stdout, `Backup written: ${file}`)
      assert.include(
        result.stdout,
        `schema: ${shortName(release[release.length - 1])} (${release.length} migrations)`
      )
      assert.match(
        result.stdout,
        new RegExp(`size: [\\d.]+ (kB|MB|GB) \\(${statSync(file).size} bytes\\)`)
      )
      assert.equal(statSync(file).mode & 0o777, 0o600)
      assert.deepEqual(leftovers(work(), ['busy.dump', 'busy.sqlite3']), [])

      await freshDatabase('fresh')
      const restored = await restore(file, 'fresh', '--force')
      assert.equal(restored.code, 0, restored.stderr + restored.stdout)

      const source = await ordersAndCallbacks(db.connection())
      const copy = await reading('fresh', ordersAndCallbacks)
      // Taken while the writes went on: at least the orders committed before it (the write in hand may not be), not all of them.
      assert.isAtLeast(copy.orders.length, before - 1)
      assert.isBelow(copy.orders.length, source.orders.length)
      // One moment: the first N orders of the one writer, each with its callback, nothing half-written.
      assert.deepEqual(copy.orders, source.orders.slice(0, copy.orders.length))
      assert.deepEqual(copy.callbacks, source.callbacks.slice(0, copy.orders.length))
      assert.include(
        restored.stdout,
        `The database now holds ${copy.orders.length} orders and ${copy.orders.length} callbacks`
      )
    } finally {
      stop = true
      await loop
    }
  }).timeout(180_000)

  test('a restore into a fresh database brings back every order, callback and setting', async ({
    assert,
  }) => {
    for (let index = 0; index < 30; index++) await writeOrderWithCallback()
    const [first] = await db.from('callbacks').orderBy('id').limit(1)
    await db
      .from('callbacks')
      .where('id', first.id)
      .update({ status: 'delivered', attempts: 2, last_http_status: 200 })
    const file = backupPath('quiet')
    const result = await backUp(file)
    assert.equal(result.code, 0, result.stderr + result.stdout)

    await freshDatabase('fresh')
    const restored = await restore(file, 'fresh', '--force')
    assert.equal(restored.code, 0, restored.stderr + restored.stdout)
    assert.include(restored.stdout, 'no migration to run')
    assert.include(restored.stdout, 'The database now holds 30 orders and 30 callbacks')

    const source = await ordersAndCallbacks(db.connection())
    const copy = await reading('fresh', ordersAndCallbacks)
    assert.lengthOf(copy.orders, 30)
    assert.deepEqual(copy, source)
    const settings = await reading('fresh', (client) =>
      client.from('settings').orderBy('key').select('*')
    )
    assert.deepEqual(settings, await db.from('settings').orderBy('key').select('*'))
    const apiKeys = await reading('fresh', (client) =>
      client.from('api_keys').orderBy('id').select('*')
    )
    assert.deepEqual(apiKeys, await db.from('api_keys').orderBy('id').select('*'))
  }).timeout(180_000)

  test('a restore is refused while a server uses the database, and goes through once it is stopped', async ({
    assert,
  }) => {
    for (let index = 0; index < 5; index++) await writeOrderWithCallback()
    const file = backupPath('for-live')
    assert.equal((await backUp(file)).code, 0)

    await freshDatabase('live')
    // The server migrates its (empty) database on start and keeps it open.
    const server = await startServerProcess(other('live'))
    try {
      const refused = await restore(file, 'live', '--force')
      assert.equal(refused.code, 1)
      assert.match(refused.stderr, /is in use/)
      assert.match(refused.stderr, /Stop every (process|server and worker) of the gateway/)
      assert.equal(await reading('live', (client) => countOrders(client)), 0)
    } finally {
      await server.stop()
    }
    const restored = await restore(file, 'live', '--force')
    assert.equal(restored.code, 0, restored.stderr + restored.stdout)
    assert.equal(await reading('live', (client) => countOrders(client)), 5)
  }).timeout(180_000)

  test('a restore asks for confirmation: with no terminal and no --force nothing changes', async ({
    assert,
  }) => {
    await writeOrderWithCallback()
    const file = backupPath('confirm')
    assert.equal((await backUp(file)).code, 0)
    await freshDatabase('fresh')
    assert.equal((await runAce(['migration:run', '--force'], other('fresh'))).code, 0)

    const refused = await restore(file, 'fresh')
    assert.equal(refused.code, 1)
    assert.match(
      refused.stderr,
      /Replace everything in .* There is no terminal to ask: run again with --force to confirm/
    )
    assert.equal(await reading('fresh', (client) => countOrders(client)), 0)
  }).timeout(120_000)

  test('a restore refuses a file that is not a backup of this gateway, and leaves the database as it was', async ({
    assert,
  }) => {
    await writeOrderWithCallback()
    const good = backupPath('good')
    assert.equal((await backUp(good)).code, 0)
    await freshDatabase('fresh')
    assert.equal((await restore(good, 'fresh', '--force')).code, 0)

    const text = join(work(), 'notes.txt')
    writeFileSync(text, 'not a backup\n')
    const refusedText = await restore(text, 'fresh', '--force')
    assert.equal(refusedText.code, 1)
    assert.include(
      refusedText.stderr,
      `${text} is not a backup of this gateway: it is neither a SQLite database nor a pg_dump custom-format archive`
    )

    const missing = await restore(join(work(), 'nothing-here.dump'), 'fresh', '--force')
    assert.equal(missing.code, 1)
    assert.include(missing.stderr, 'nothing-here.dump does not exist')

    // A database of the right engine that is not the gateway's.
    const foreign = join(work(), `foreign.${isPg() ? 'dump' : 'sqlite3'}`)
    await freshDatabase('foreign')
    if (isPg()) {
      await reading('foreign', (client) => client.rawQuery('CREATE TABLE notes (id int)'))
      assert.equal((await runAce(['db:backup', '--to', foreign], other('foreign'))).code, 0)
    } else {
      const Database = createRequire(import.meta.url)('better-sqlite3')
      const foreignDb = new Database(foreign)
      foreignDb.exec('CREATE TABLE notes (id int)')
      foreignDb.close()
    }
    const refusedForeign = await restore(foreign, 'fresh', '--force')
    assert.equal(refusedForeign.code, 1)
    assert.include(
      refusedForeign.stderr,
      `${foreign} is not a backup of this gateway: it has no adonis_schema, orders, callbacks, settings, api_keys tables`
    )

    // A backup cut short (a copy that did not finish).
    const cut = join(work(), `cut.${isPg() ? 'dump' : 'sqlite3'}`)
    for (let index = 0; index < 200; index++) await writeOrderWithCallback()
    assert.equal((await backUp(cut)).code, 0)
    truncateSync(cut, Math.floor(statSync(cut).size * 0.6))
    const refusedCut = await restore(cut, 'fresh', '--force')
    assert.equal(refusedCut.code, 1)
    assert.match(
      refusedCut.stderr,
      isPg()
        ? /cut\.dump (cannot be read|is not a backup of this gateway)|pg_restore failed .*; the database was not changed/
        : /cut\.sqlite3 (is damaged|is not a backup of this gateway)/
    )

    // The other engine's backup.
    const otherKind = join(work(), `other.${isPg() ? 'sqlite3' : 'dump'}`)
    writeFileSync(
      otherKind,
      isPg() ? Buffer.from('SQLite format 3\0' + '\0'.repeat(100), 'latin1') : 'PGDMP\x01\x0e'
    )
    const refusedKind = await restore(otherKind, 'fresh', '--force')
    assert.equal(refusedKind.code, 1)
    assert.match(
      refusedKind.stderr,
      isPg()
        ? /is a SQLite backup, but this gateway runs on PostgreSQL/
        : /is a PostgreSQL backup, but this gateway runs on SQLite/
    )

    // Every refusal left the restored database alone.
    assert.equal(await reading('fresh', (client) => countOrders(client)), 1)
    assert.equal(await reading('fresh', (client) => countCallbacks(client)), 1)
  }).timeout(240_000)

  test('a restore refuses a backup of a newer schema, and migrates an older one', async ({
    assert,
  }) => {
    await writeOrderWithCallback()
    const future = 'database/migrations/1999999999999_from_a_newer_release'
    const newer = backupPath('newer')
    await db.table('adonis_schema').insert({ name: future, batch: 99, migration_time: new Date() })
    try {
      assert.equal((await backUp(newer)).code, 0)
    } finally {
      await db.from('adonis_schema').where('name', future).delete()
    }
    await freshDatabase('fresh')
    assert.equal((await runAce(['migration:run', '--force'], other('fresh'))).code, 0)
    const refused = await restore(newer, 'fresh', '--force')
    assert.equal(refused.code, 1)
    assert.include(refused.stderr, `${newer} was taken by a newer release`)
    assert.include(refused.stderr, '1999999999999_from_a_newer_release')
    assert.equal(await reading('fresh', (client) => countOrders(client)), 0)

    // A backup one migration behind this release, restored over a database at this release's schema.
    const release = await releaseMigrations(app)
    await freshDatabase('old')
    assert.equal((await runAce(['migration:run', '--force'], other('old'))).code, 0)
    const rolledBack = await runAce(['migration:rollback', '--step', '1', '--force'], other('old'))
    assert.equal(rolledBack.code, 0, rolledBack.stderr + rolledBack.stdout)
    const older = backupPath('older')
    const olderBackup = await runAce(['db:backup', '--to', older], other('old'))
    assert.equal(olderBackup.code, 0, olderBackup.stderr)
    assert.include(
      olderBackup.stdout,
      `schema: ${shortName(release[release.length - 2])} (${release.length - 1} migrations)`
    )

    const migrated = await restore(older, 'fresh', '--force')
    assert.equal(migrated.code, 0, migrated.stderr + migrated.stdout)
    assert.include(migrated.stdout, `ran 1 migration (${shortName(release[release.length - 1])})`)
    const names = await reading('fresh', (client) => client.from('adonis_schema').select('name'))
    assert.sameMembers(
      names.map((row: { name: string }) => row.name),
      release
    )
  }).timeout(240_000)

  test('--to a missing directory, an unwritable one or an existing file fails clearly and leaves no file', async ({
    assert,
  }) => {
    const missingDirectory = join(work(), 'no-such-directory')
    const intoMissing = await backUp(join(missingDirectory, 'backup.dump'))
    assert.equal(intoMissing.code, 1)
    assert.include(
      intoMissing.stderr,
      `The directory ${missingDirectory} does not exist: create it first`
    )
    assert.isFalse(existsSync(missingDirectory))

    const locked = join(work(), 'read-only')
    mkdirSync(locked)
    chmodSync(locked, 0o500)
    let unwritable = locked
    try {
      accessSync(locked, constants.W_OK)
      // root writes anywhere it has a mode for: a directory no user may create files in.
      unwritable = '/sys'
    } catch {}
    const intoUnwritable = await backUp(join(unwritable, 'helper_backup.dump'))
    assert.equal(intoUnwritable.code, 1)
    assert.include(intoUnwritable.stderr, `Cannot write to ${unwritable}: permission denied`)
    assert.include(intoUnwritable.stderr, 'No backup was written')
    assert.isFalse(existsSync(join(unwritable, 'helper_backup.dump')))
    chmodSync(locked, 0o700)
    assert.deepEqual(readdirSync(locked), [])

    const existing = join(work(), 'existing.dump')
    writeFileSync(existing, 'keep me')
    const overExisting = await backUp(existing)
    assert.equal(overExisting.code, 1)
    assert.include(overExisting.stderr, `${existing} already exists`)
    assert.equal(readFile(existing), 'keep me')
    assert.deepEqual(leftovers(work(), ['existing.dump', 'read-only']), [])
  }).timeout(120_000)

  test('a backup that fails part way leaves no partial file', async ({ assert }) => {
    // The database cannot be read: pg_dump of a database that does not exist, or a file that is not SQLite.
    const broken = join(work(), 'broken')
    mkdirSync(broken)
    const env = isPg()
      ? { PG_DB_NAME: `${process.env.PG_DB_NAME}_does_not_exist` }
      : { SQLITE_PATH: join(broken, 'not-a-database.sqlite3') }
    if (!isPg())
      writeFileSync(
        env.SQLITE_PATH!,
        'this is not a database, it is text long enough to be read as one'.repeat(100)
      )
    const target = join(work(), 'out', 'backup.bin')
    mkdirSync(join(work(), 'out'))
    const result = await runAce(['db:backup', '--to', target], env)
    assert.equal(result.code, 1)
    assert.match(
      result.stderr,
      isPg()
        ? /pg_dump failed .*does_not_exist.* No backup was written/
        : /The backup failed: .*not a database.* No backup was written/
    )
    assert.deepEqual(readdirSync(join(work(), 'out')), [])
  }).timeout(120_000)

  test('with pg_dump missing from PATH, PostgreSQL backups say what to install (SQLite needs no tool)', async ({
    assert,
  }) => {
    const emptyPath = mkdtempSync(join(tmpdir(), 'helper-backup-path-'))
    try {
      const file = backupPath('no-tools')
      const result = await backUp(file, { PATH: emptyPath })
      if (isPg()) {
        assert.equal(result.code, 1)
        assert.include(result.stderr, 'pg_dump was not found on PATH')
        assert.include(result.stderr, 'apt-get install postgresql-client')
        assert.isFalse(existsSync(file))
        assert.deepEqual(leftovers(work()), [])
      } else {
        assert.equal(result.code, 0, result.stderr)
        assert.isTrue(existsSync(file))
      }
    } finally {
      rmSync(emptyPath, { recursive: true, force: true })
    }
  }).timeout(120_000)

  test('without --to the backup goes to storage/backups under a UTC time and the database kind', async ({
    assert,
  }) => {
    const result = await runAce(['db:backup'])
    assert.equal(result.code, 0, result.stderr)
    const match = /Backup written: (\S+)/.exec(result.stdout)
    assert.isNotNull(match)
    const file = match![1]
    try {
      const kind = isPg() ? 'pg' : 'sqlite'
      assert.match(
        file,
        new RegExp(
          `^${app.makePath('storage', 'backups')}/gateway-${kind}-\\d{8}T\\d{6}Z\\.(dump|sqlite3)$`
        )
      )
      assert.equal(statSync(file).mode & 0o777, 0o600)
    } finally {
      rmSync(file, { force: true })
    }
  }).timeout(120_000)
})

async function countOrders(client: ReturnType<typeof db.connection>) {
  const [row] = await client.from('orders').count('* as total')
  return Number(row.total)
}

async function countCallbacks(client: ReturnType<typeof db.connection>) {
  const [row] = await client.from('callbacks').count('* as total')
  return Number(row.total)
}

function readFile(path: string) {
  return readFileSync(path, 'utf8')
}
