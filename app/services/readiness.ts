import { readdir } from 'node:fs/promises'
import { extname, join } from 'node:path'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import { isShuttingDown } from '#support/runtime/shutdown'

export type CheckResult = 'ok' | 'unreachable' | 'timeout' | 'pending' | 'unknown' | 'shutting_down'

export type Readiness = {
  ready: boolean
  checks: { database: CheckResult; migrations: CheckResult; process: 'ok' | 'shutting_down' }
  /** Migrations not applied yet (names), when the check could run. */
  pending_migrations?: string[]
}

/** A readiness answer is reused this long (probes of several balancers cost one round trip). */
const CACHE_MS = 1000
/** A database that does not answer within this is not ready. */
const PROBE_TIMEOUT_MS = 2000
const MIGRATIONS_TABLE = 'adonis_schema'

/**
 * Whether this process can serve: the database answers a round trip, every
 * migration of this release is applied, and the process is not shutting
 * down. Used by GET /health/ready (load balancers, Kubernetes).
 */
export class ReadinessCheck {
  #cached: { at: number; result: Promise<Readiness> } | null = null
  #migrationNames: Promise<string[]> | null = null

  async check(): Promise<Readiness> {
    const now = Date.now()
    if (!this.#cached || now - this.#cached.at >= CACHE_MS) {
      this.#cached = { at: now, result: this.#probe() }
    }
    const result = await this.#cached.result
    // A shutdown begun since the cached probe counts at once.
    if (isShuttingDown() && result.checks.process === 'ok') {
      return { ...result, ready: false, checks: { ...result.checks, process: 'shutting_down' } }
    }
    return result
  }

  /** Tests: forget the cached answer. */
  reset() {
    this.#cached = null
  }

  async #probe(): Promise<Readiness> {
    const processState = isShuttingDown() ? 'shutting_down' : 'ok'
    let database: CheckResult = 'ok'
    let migrations: CheckResult = 'unknown'
    let pending: string[] | undefined
    try {
      const applied = await withTimeout(db.from(MIGRATIONS_TABLE).select('name'), PROBE_TIMEOUT_MS)
      const done = new Set((applied as { name: string }[]).map((row) => row.name))
      const known = await this.#migrations()
      pending = known.filter((name) => !done.has(name))
      migrations = pending.length === 0 ? 'ok' : 'pending'
    } catch (error) {
      database = error instanceof ProbeTimeout ? 'timeout' : 'unreachable'
    }
    return {
      ready: database === 'ok' && migrations === 'ok' && processState === 'ok',
      checks: { database, migrations, process: processState },
      ...(pending && pending.length > 0 ? { pending_migrations: pending } : {}),
    }
  }

  /** This release's migrations, named as the migrator records them (read once: they ship with the code). */
  #migrations(): Promise<string[]> {
    this.#migrationNames ??= (async () => {
      const config = db.getRawConnection(db.primaryConnectionName)?.config
      const paths = config?.migrations?.paths ?? ['database/migrations']
      const names: string[] = []
      for (const path of paths) {
        const directory = path.replace(/^\.\//, '')
        const files = await readdir(app.makePath(directory))
        for (const file of files) {
          if (file.endsWith('.d.ts') || !['.ts', '.js'].includes(extname(file))) continue
          names.push(join(directory, file.slice(0, -extname(file).length)).replaceAll('\\', '/'))
        }
      }
      return names
    })().catch((error) => {
      this.#migrationNames = null
      throw error
    })
    return this.#migrationNames
  }
}

class ProbeTimeout extends Error {}

function withTimeout<T>(work: PromiseLike<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout()), ms)
  })
  return Promise.race([Promise.resolve(work), timeout]).finally(() => clearTimeout(timer))
}

const readiness = new ReadinessCheck()
export default readiness
