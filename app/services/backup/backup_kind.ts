import { closeSync, openSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { OperatorError } from '#support/cli/operator_error'

/** The two engines the gateway runs on, named as DB_CONNECTION names them. */
export type DatabaseKind = 'sqlite' | 'pg'

/** What a backup holds, read from it: its tables and the migrations it records. */
export type BackupContents = { tables: string[]; migrations: string[] }

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1')
/** pg_dump's custom format (-Fc) begins with these bytes. */
const PG_CUSTOM_MAGIC = Buffer.from('PGDMP', 'latin1')

/** The kind of backup a file is, from its first bytes; null when it is neither. */
export function backupKindOf(file: string): DatabaseKind | null {
  const head = Buffer.alloc(16)
  let read = 0
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new OperatorError(`${file} does not exist`)
    if (code === 'EACCES' || code === 'EPERM')
      throw new OperatorError(`${file} cannot be read: permission denied`)
    if (code === 'EISDIR') throw new OperatorError(`${file} is a directory, not a backup file`)
    throw new OperatorError(`${file} cannot be read: ${(error as Error).message}`)
  }
  try {
    read = readSync(fd, head, 0, head.length, 0)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EISDIR') throw new OperatorError(`${file} is a directory, not a backup file`)
    throw error
  } finally {
    closeSync(fd)
  }
  if (read >= SQLITE_MAGIC.length && head.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC))
    return 'sqlite'
  if (
    read >= PG_CUSTOM_MAGIC.length &&
    head.subarray(0, PG_CUSTOM_MAGIC.length).equals(PG_CUSTOM_MAGIC)
  )
    return 'pg'
  return null
}

export function kindName(kind: DatabaseKind) {
  return kind === 'pg' ? 'PostgreSQL' : 'SQLite'
}

/** `gateway-sqlite-20260101T120000Z.sqlite3` / `gateway-pg-20260101T120000Z.dump`: sorts by time, says what it holds. */
export function defaultBackupName(kind: DatabaseKind, now = new Date()) {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  return `gateway-${kind}-${stamp}.${kind === 'pg' ? 'dump' : 'sqlite3'}`
}

export function defaultBackupPath(storageDirectory: string, kind: DatabaseKind, now = new Date()) {
  return join(storageDirectory, 'backups', defaultBackupName(kind, now))
}

/** "12.3 MB" */
export function formatSize(bytes: number) {
  if (bytes < 1024) return `${bytes} B`
  const units = ['kB', 'MB', 'GB', 'TB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]} (${bytes} bytes)`
}
