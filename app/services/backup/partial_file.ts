import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { userInfo } from 'node:os'
import { OperatorError } from '#support/cli/operator_error'

/** Backups hold order data and encrypted secrets: readable by their owner only. */
export const BACKUP_MODE = 0o600

/**
 * A file written under a temporary name beside its target and renamed to
 * it once complete: the target either does not exist or is whole. The
 * temporary file is created 0600 before anything is written to it, so no
 * other user can open it even for a moment.
 */
export class PartialFile {
  #done = false

  private constructor(
    readonly target: string,
    readonly path: string
  ) {}

  /** Creates the temporary file beside `target`; refuses a target that exists or a directory that cannot take it. */
  static create(target: string): PartialFile {
    if (existsSync(target)) {
      throw new OperatorError(
        `${target} already exists: choose another file name, or remove it first`
      )
    }
    return PartialFile.beside(target)
  }

  /** A temporary file beside `target` (on its file system, so it can be renamed over it), whether or not `target` exists. */
  static beside(target: string): PartialFile {
    const directory = dirname(target)
    const path = join(directory, `.${basename(target)}.partial-${randomBytes(6).toString('hex')}`)
    try {
      closeSync(openSync(path, 'wx', BACKUP_MODE))
      // The umask cannot widen it, but a mode set explicitly reads plainly.
      chmodSync(path, BACKUP_MODE)
    } catch (error) {
      throw new OperatorError(cannotWrite(directory, error))
    }
    return new PartialFile(target, path)
  }

  /** Flushes the file to disk and gives it its name (never over a file that appeared meanwhile). */
  commit() {
    syncFile(this.path)
    try {
      // link() refuses an existing target where rename() would replace it.
      linkSync(this.path, this.target)
      unlinkSync(this.path)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EEXIST') {
        this.discard()
        throw new OperatorError(
          `${this.target} appeared while the backup was written: the backup was not kept`
        )
      }
      // A file system without hard links: rename, having checked just above.
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error
      if (existsSync(this.target)) {
        this.discard()
        throw new OperatorError(
          `${this.target} appeared while the backup was written: the backup was not kept`
        )
      }
      renameSync(this.path, this.target)
    }
    this.#done = true
    syncFile(dirname(this.target))
  }

  /** Removes the temporary file (idempotent; after commit it does nothing). */
  discard() {
    if (this.#done) return
    this.#done = true
    try {
      unlinkSync(this.path)
    } catch {
      // already gone
    }
  }

  get size() {
    return statSync(this.#done ? this.target : this.path).size
  }
}

function syncFile(path: string) {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Why a file cannot be created in `directory`, in the operator's words. */
export function cannotWrite(directory: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  switch (code) {
    case 'ENOENT':
      return `The directory ${directory} does not exist: create it first (mkdir -p ${directory}) or choose another path`
    case 'ENOTDIR':
      return `${directory} is not a directory: choose another path`
    case 'EACCES':
    case 'EPERM':
      return `Cannot write to ${directory}: permission denied for user ${currentUser()}`
    case 'EROFS':
      return `Cannot write to ${directory}: it is on a read-only file system`
    case 'ENOSPC':
      return `Cannot write to ${directory}: no space left on the device`
    default:
      return `Cannot write to ${directory}: ${(error as Error).message}`
  }
}

function currentUser() {
  try {
    return userInfo().username
  } catch {
    return String(process.getuid?.() ?? 'unknown')
  }
}

/**
 * Runs `work`; an interrupt (Ctrl-C, SIGTERM) meanwhile first runs
 * `cleanup` (the temporary file goes), then ends the process as the
 * signal would have.
 */
export async function cleaningUpOnSignal<T>(
  cleanup: () => void,
  work: () => Promise<T>
): Promise<T> {
  const onSignal = (signal: NodeJS.Signals) => {
    cleanup()
    process.stderr.write(`${signal}: stopped, nothing was written\n`)
    process.exit(signal === 'SIGINT' ? 130 : 143)
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    return await work()
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
