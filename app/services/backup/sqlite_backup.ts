import { createRequire } from 'node:module'
import {
  chmodSync,
  chownSync,
  closeSync,
  statSync,
  copyFileSync,
  constants,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { dirname } from 'node:path'
import { OperatorError } from '#support/cli/operator_error'
import type { PartialFile } from '#services/backup/partial_file'
import { BACKUP_MODE } from '#services/backup/partial_file'
import type { BackupContents } from '#services/backup/backup_kind'

/** The part of better-sqlite3 used here (the package ships no types). */
type Statement = { all: (...bindings: unknown[]) => Record<string, unknown>[] }
type Connection = {
  pragma: (source: string, options?: { simple: boolean }) => unknown
  exec: (sql: string) => void
  prepare: (sql: string) => Statement
  backup: (
    filename: string,
    options?: { progress?: (info: { totalPages: number; remainingPages: number }) => number }
  ) => Promise<unknown>
  close: () => void
}
type DatabaseClass = new (
  filename: string,
  options?: { fileMustExist?: boolean; timeout?: number }
) => Connection

const Database = createRequire(import.meta.url)('better-sqlite3') as DatabaseClass

/** Pages copied per backup step: all of them, so the copy is one read of one snapshot (WAL: writers go on meanwhile). */
const ALL_PAGES = 0x7fffffff

/**
 * Copies the live database into `partial` with SQLite's online backup API,
 * through a connection of its own: in WAL mode the copy reads one
 * snapshot while the server and the order writer thread keep writing
 * (a commit that lands during the copy is simply not in it). Returns what
 * the copy holds.
 */
export async function backupSqlite(live: string, partial: PartialFile): Promise<BackupContents> {
  if (!existsSync(live)) {
    throw new OperatorError(
      `There is no SQLite database at ${live} (SQLITE_PATH): nothing to back up`
    )
  }
  const source = new Database(live, { fileMustExist: true, timeout: 10_000 })
  try {
    await source.backup(partial.path, { progress: () => ALL_PAGES })
  } finally {
    source.close()
  }
  return inspectSqlite(partial.path, partial.path)
}

/**
 * Reads a SQLite file that is ours to change (a fresh backup, or the
 * staged copy of one being restored): sets it to a self-contained rollback
 * journal (no -wal beside it to lose), checks its pages, and lists its
 * tables and recorded migrations. `shownAs` names it in messages.
 */
export function inspectSqlite(path: string, shownAs: string): BackupContents {
  let connection: Connection
  try {
    connection = new Database(path, { fileMustExist: true, timeout: 10_000 })
  } catch (error) {
    throw new OperatorError(
      `${shownAs} is not a backup of this gateway: ${(error as Error).message}`
    )
  }
  try {
    connection.pragma('journal_mode = DELETE')
    const check = connection
      .prepare('PRAGMA quick_check')
      .all()
      .map((row) => String(Object.values(row)[0]))
    if (check.length !== 1 || check[0] !== 'ok') {
      throw new OperatorError(
        `${shownAs} is damaged (SQLite quick_check: ${check.slice(0, 3).join('; ')})`
      )
    }
    const tables = connection
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((row) => String(row.name))
    const migrations = tables.includes('adonis_schema')
      ? connection
          .prepare('SELECT name FROM adonis_schema')
          .all()
          .map((row) => String(row.name))
      : []
    return { tables, migrations }
  } catch (error) {
    if (error instanceof OperatorError) throw error
    throw new OperatorError(
      `${shownAs} is not a backup of this gateway: ${(error as Error).message}`
    )
  } finally {
    connection.close()
  }
}

/** Copies a backup beside the live database (same file system, so it can be renamed over it), 0600. */
export function stageSqliteCopy(file: string, partial: PartialFile) {
  copyFileSync(file, partial.path, constants.COPYFILE_FICLONE)
  // copyFile gives the copy the mode of its source.
  chmodSync(partial.path, BACKUP_MODE)
  const fd = openSync(partial.path, 'r+', BACKUP_MODE)
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function inUse(live: string) {
  return new OperatorError(
    `The database ${live} is in use: a server, a worker (scheduler:run) or another command has it open. ` +
      'Stop every process of the gateway, then run db:restore again'
  )
}

/**
 * Takes SQLite's exclusive lock on the live file and keeps it until the
 * returned connection is closed. In WAL mode every open connection holds a
 * shared lock on the file for as long as it is open (an idle server's
 * pooled connection included), so leaving WAL mode, which needs the
 * exclusive lock, succeeds only when no other connection exists, in any
 * process. The lock ends with the process that holds it: a process that
 * died leaves nothing to clear. Journal mode MEMORY keeps the lock without
 * leaving a journal file beside a database about to be replaced.
 */
export function lockSqliteExclusively(live: string): Connection {
  const connection = new Database(live, { fileMustExist: true, timeout: 1_000 })
  try {
    connection.pragma('locking_mode = EXCLUSIVE')
    const mode = connection.pragma('journal_mode = MEMORY', { simple: true })
    if (mode !== 'memory') throw inUse(live)
    connection.exec('BEGIN EXCLUSIVE')
    connection.exec('COMMIT')
    return connection
  } catch (error) {
    connection.close()
    if (error instanceof OperatorError) throw error
    if (
      (error as { code?: string }).code?.startsWith('SQLITE_BUSY') ||
      (error as { code?: string }).code === 'SQLITE_LOCKED'
    ) {
      throw inUse(live)
    }
    throw error
  }
}

/** Refuses (OperatorError) when another connection has the live database open. */
export function assertSqliteNotInUse(live: string) {
  if (!existsSync(live)) return
  lockSqliteExclusively(live).close()
}

/**
 * The restored file gets the live file's owner and mode: a restore run as
 * root must not leave a database the gateway's own user cannot open.
 */
function keepOwnership(live: string, staged: string) {
  const current = statSync(live)
  chmodSync(staged, current.mode & 0o777)
  try {
    chownSync(staged, current.uid, current.gid)
  } catch (error) {
    // Not root: the file is already ours, as the live one is (we could lock it).
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error
  }
}

/**
 * Puts the staged copy in place of the live database. A process starting
 * meanwhile is held off twice: by the migration lock file every starting
 * process takes before it opens the database (installation_service.ts,
 * `<file>.migrating`), and by SQLite's exclusive lock, held on the old file
 * until the new one has its name. The old file's -wal and -shm go with it
 * (the lock checkpointed the WAL first).
 */
export function swapSqliteFile(staged: string, live: string) {
  mkdirSync(dirname(live), { recursive: true })
  const migrationLock = `${live}.migrating`
  try {
    writeFileSync(migrationLock, String(process.pid), { flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    throw new OperatorError(
      `A process is migrating ${live} (${migrationLock} exists): a server is starting. Stop it and run db:restore again ` +
        '(if no process is running, delete that file)'
    )
  }
  try {
    const lock = existsSync(live) ? lockSqliteExclusively(live) : null
    try {
      if (lock) keepOwnership(live, staged)
      for (const suffix of ['-wal', '-shm', '-journal']) rmSync(`${live}${suffix}`, { force: true })
      renameSync(staged, live)
      const directory = openSync(dirname(live), 'r')
      try {
        fsyncSync(directory)
      } finally {
        closeSync(directory)
      }
    } finally {
      lock?.close()
    }
  } finally {
    rmSync(migrationLock, { force: true })
  }
}
