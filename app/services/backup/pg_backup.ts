import { spawn } from 'node:child_process'
import { OperatorError } from '#support/cli/operator_error'
import type { PartialFile } from '#services/backup/partial_file'
import type { BackupContents } from '#services/backup/backup_kind'

/** The PostgreSQL connection of config/database.ts (the PG_* variables). */
export type PgConnection = {
  host: string
  port: number
  user: string
  password?: string
  database: string
}

/** The client tools' environment: they connect where the gateway does, and never prompt for a password. */
export function pgToolEnv(connection: PgConnection, application: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PGHOST: connection.host,
    PGPORT: String(connection.port),
    PGUSER: connection.user,
    PGPASSWORD: connection.password ?? '',
    PGDATABASE: connection.database,
    PGAPPNAME: application,
    PGCONNECT_TIMEOUT: '10',
  }
}

export function missingTool(tool: string) {
  return new OperatorError(
    `${tool} was not found on PATH. Backups and restores of PostgreSQL use the PostgreSQL client tools ` +
      '(pg_dump, pg_restore, psql) of the server’s major version or newer: install them ' +
      '(Debian/Ubuntu: apt-get install postgresql-client; RHEL/Fedora: dnf install postgresql; ' +
      'Alpine: apk add postgresql-client; macOS: brew install libpq) or add their directory to PATH'
  )
}

type ToolResult = { code: number; stdout: string; stderr: string }

/** Runs one of the client tools to its end; a missing tool is refused with what to install. */
function runTool(tool: string, args: string[], env: NodeJS.ProcessEnv): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? missingTool(tool) : error)
    )
    child.once('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr })
    )
  })
}

/** The tool's own words, for a message: its lines without the noise. */
function toolSaid(stderr: string) {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  return lines.slice(0, 4).join(' / ') || 'no message'
}

/**
 * Dumps the database with pg_dump in its custom format (compressed,
 * restorable table by table). pg_dump reads one snapshot (a repeatable
 * read transaction): rows written while it runs are consistently in or out.
 */
export async function backupPg(
  connection: PgConnection,
  partial: PartialFile
): Promise<BackupContents> {
  const env = pgToolEnv(connection, 'gateway db:backup')
  const result = await runTool(
    'pg_dump',
    ['--format=custom', '--no-password', `--file=${partial.path}`],
    env
  )
  if (result.code !== 0) {
    throw new OperatorError(`pg_dump failed (exit ${result.code}): ${toolSaid(result.stderr)}`)
  }
  return inspectPgArchive(partial.path, partial.path, env)
}

/**
 * Reads a custom-format archive with pg_restore: its table of contents
 * (the tables) and the rows of `adonis_schema` (the migrations). A file
 * pg_restore cannot read is not a backup.
 */
export async function inspectPgArchive(
  file: string,
  shownAs: string,
  env: NodeJS.ProcessEnv = process.env
): Promise<BackupContents> {
  const list = await runTool('pg_restore', ['--list', file], env)
  if (list.code !== 0) {
    throw new OperatorError(
      `${shownAs} is not a backup of this gateway: pg_restore cannot read it (${toolSaid(list.stderr)})`
    )
  }
  const tables: string[] = []
  for (const line of list.stdout.split('\n')) {
    const match = /^\d+; \d+ \d+ TABLE public (\S+) /.exec(line)
    if (match) tables.push(match[1])
  }
  if (!tables.includes('adonis_schema')) return { tables, migrations: [] }
  const data = await runTool(
    'pg_restore',
    ['--data-only', '--schema=public', '--table=adonis_schema', '--file=-', file],
    env
  )
  if (data.code !== 0) {
    throw new OperatorError(
      `${shownAs} cannot be read: pg_restore failed (${toolSaid(data.stderr)})`
    )
  }
  return { tables, migrations: copiedColumn(data.stdout, 'adonis_schema', 'name') }
}

/** The values of one column in the COPY block of `table` in a plain SQL script. */
function copiedColumn(script: string, table: string, column: string): string[] {
  const lines = script.split('\n')
  const start = lines.findIndex((line) => line.startsWith(`COPY public.${table} (`))
  if (start === -1) return []
  const columns = /\(([^)]*)\)/
    .exec(lines[start])![1]
    .split(',')
    .map((name) => name.trim().replace(/^"|"$/g, ''))
  const index = columns.indexOf(column)
  const values: string[] = []
  for (const line of lines.slice(start + 1)) {
    if (line === '\\.') break
    const value = line.split('\t')[index]
    if (value !== undefined) values.push(value)
  }
  return values
}

/**
 * Replaces the database's content with the archive's, in one transaction:
 * psql runs `BEGIN; DROP SCHEMA public CASCADE; CREATE SCHEMA public;`,
 * then pg_restore's script (owners and grants left to the connecting
 * user), and COMMIT only once pg_restore has ended well. Any failure
 * (pg_restore's, a statement's) ends psql without COMMIT: the server rolls
 * the transaction back and the database is as it was. Dropping the schema
 * (rather than pg_restore --clean) also drops the tables of migrations
 * newer than the backup, so they can be run again after it.
 */
export async function restorePg(connection: PgConnection, file: string): Promise<void> {
  const env = pgToolEnv(connection, 'gateway db:restore')
  await new Promise<void>((resolve, reject) => {
    let settled = false
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      psql.kill('SIGKILL')
      restore.kill('SIGKILL')
      reject(error)
    }
    const psql = spawn(
      'psql',
      ['--no-psqlrc', '--quiet', '--no-password', '--set=ON_ERROR_STOP=1'],
      {
        env,
        stdio: ['pipe', 'ignore', 'pipe'],
      }
    )
    const restore = spawn('pg_restore', ['--no-owner', '--no-privileges', '--file=-', file], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let psqlSaid = ''
    let restoreSaid = ''
    psql.stderr.on('data', (chunk) => (psqlSaid += chunk))
    restore.stderr.on('data', (chunk) => (restoreSaid += chunk))
    psql.once('error', (error: NodeJS.ErrnoException) =>
      fail(error.code === 'ENOENT' ? missingTool('psql') : error)
    )
    restore.once('error', (error: NodeJS.ErrnoException) =>
      fail(error.code === 'ENOENT' ? missingTool('pg_restore') : error)
    )
    // psql ending early (a failed statement) breaks the pipe: its exit says why.
    psql.stdin.on('error', () => {})
    psql.stdin.write(
      'SET client_min_messages = warning;\nBEGIN;\nDROP SCHEMA IF EXISTS public CASCADE;\nCREATE SCHEMA public;\n'
    )
    restore.stdout.pipe(psql.stdin, { end: false })
    restore.once('close', (code) => {
      if (code !== 0) {
        fail(
          new OperatorError(
            `pg_restore failed (exit ${code}): ${toolSaid(restoreSaid)}; the database was not changed`
          )
        )
        return
      }
      psql.stdin.end('COMMIT;\n')
    })
    psql.once('close', (code) => {
      if (settled) return
      if (code === 0 && restore.exitCode === 0) {
        settled = true
        resolve()
        return
      }
      fail(
        new OperatorError(
          `The restore failed (psql exit ${code}): ${toolSaid(psqlSaid)}; the database was not changed`
        )
      )
    })
  })
}
