import { readdir, readlink, realpath } from 'node:fs/promises'
import { dirname } from 'node:path'
import { result, type CheckResult, type DoctorContext } from '#services/doctor/doctor_check'

const TITLE = 'SQLite use'

/** File systems whose locks SQLite cannot trust (its documentation: "avoid SQLite over a network file system"). */
const NETWORK_FILESYSTEMS = new Set([
  'nfs',
  'nfs4',
  'cifs',
  'smb',
  'smb3',
  'smbfs',
  '9p',
  'afs',
  'ceph',
  'glusterfs',
  'lustre',
  'gpfs',
  'davfs',
  'fuse.sshfs',
  'fuse.glusterfs',
  'fuse.rclone',
  'fuse.s3fs',
  'fuse.gcsfuse',
  'fuse.juicefs',
])

/** /proc/mounts escapes spaces and the like as octal (\040). */
function unescapeMount(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8))
  )
}

/** The file system type of the mount that holds `path` (the longest mount point above it); null when unknown. */
export function filesystemOf(
  path: string,
  mounts: string
): { type: string; mountPoint: string } | null {
  let best: { type: string; mountPoint: string } | null = null
  for (const line of mounts.split('\n')) {
    const [, rawPoint, type] = line.trim().split(/\s+/)
    if (!rawPoint || !type) continue
    const mountPoint = unescapeMount(rawPoint)
    const inside = mountPoint === '/' || path === mountPoint || path.startsWith(`${mountPoint}/`)
    if (inside && (!best || mountPoint.length > best.mountPoint.length)) best = { type, mountPoint }
  }
  return best
}

/**
 * Other processes of this machine that hold the database file (or its WAL)
 * open, read from /proc/<pid>/fd: Linux only, and only processes this user
 * may inspect. null when /proc cannot be read.
 */
export async function processesHolding(files: string[]): Promise<number[] | null> {
  let entries: string[]
  try {
    entries = await readdir('/proc')
  } catch {
    return null
  }
  const wanted = new Set(files)
  const holders: number[] = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    let fds: string[]
    try {
      fds = await readdir(`/proc/${entry}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '')
      if (wanted.has(target)) {
        holders.push(Number(entry))
        break
      }
    }
  }
  return holders.sort((a, b) => a - b)
}

/**
 * SQLite has one writer per database file: the web process and a separate
 * worker (`scheduler:run`) wait on each other's locks, and over a network
 * file system its locks do not hold at all. Processes are found by the
 * open database file (/proc), which needs no cooperation from them.
 */
export async function sqliteCheck(context: DoctorContext): Promise<CheckResult[]> {
  if (context.dialect !== 'sqlite') {
    return [
      result(
        'sqlite',
        TITLE,
        'ok',
        `Not used: the database is ${context.dialect === 'postgres' ? 'PostgreSQL' : context.dialect}`
      ),
    ]
  }
  if (context.sqlitePath === '' || context.sqlitePath === ':memory:') {
    return [result('sqlite', TITLE, 'ok', 'In-memory database: one process by nature')]
  }
  const file = await realpath(context.sqlitePath).catch(() => context.sqlitePath)
  const results: CheckResult[] = []

  const others = await processesHolding([file, `${file}-wal`, `${file}-shm`])
  if (others === null) {
    results.push(
      result(
        'sqlite',
        TITLE,
        'ok',
        'Cannot see other processes on this system (no /proc): make sure one process alone runs the gateway',
        null,
        'processes'
      )
    )
  } else {
    const count = others.length + (context.selfIsGateway ? 1 : 0)
    if (count > 1) {
      const pids = context.selfIsGateway ? [process.pid, ...others] : others
      results.push(
        result(
          'sqlite',
          TITLE,
          'warning',
          `${count} processes have the SQLite database open (pids ${pids.join(', ')}): SQLite has one writer, so web and worker wait on each other`,
          'Run a single process (npm start, RUN_JOBS=true) or move to PostgreSQL (DB_CONNECTION=pg) before running web and worker apart',
          'processes'
        )
      )
    } else {
      const who =
        count === 0
          ? 'No gateway process has the database open now'
          : 'One process alone has the database open'
      results.push(
        result(
          'sqlite',
          TITLE,
          'ok',
          `${who} (SQLite has one writer: keep web and jobs in one process)`,
          null,
          'processes'
        )
      )
    }
  }

  if (context.mounts !== null) {
    const fs = filesystemOf(
      await realpath(dirname(file)).catch(() => dirname(file)),
      context.mounts
    )
    if (fs && NETWORK_FILESYSTEMS.has(fs.type)) {
      results.push(
        result(
          'sqlite',
          TITLE,
          'problem',
          `The database ${file} is on a network file system (${fs.type} at ${fs.mountPoint}): SQLite's locks do not hold there and the file can be corrupted`,
          'Set SQLITE_PATH to a local disk, or use PostgreSQL (DB_CONNECTION=pg)',
          'filesystem'
        )
      )
    } else {
      results.push(
        result(
          'sqlite',
          TITLE,
          'ok',
          `On a local file system${fs ? ` (${fs.type})` : ''}`,
          null,
          'filesystem'
        )
      )
    }
  }
  return results
}
