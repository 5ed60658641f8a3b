import { readFileSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import db from '@adonisjs/lucid/services/db'
import env from '#start/env'
import settings from '#settings/settings_service'
import {
  STATUS_ORDER,
  result,
  worst,
  type CheckResult,
  type CheckStatus,
  type DoctorContext,
} from '#services/doctor/doctor_check'
import {
  adminTwoFactorCheck,
  appKeyCheck,
  appUrlCheck,
  migrationsCheck,
} from '#services/doctor/installation_checks'
import { sqliteCheck } from '#services/doctor/database_checks'
import { chainSetupChecks, liveChainChecks } from '#services/doctor/chain_checks'
import { rateChecks } from '#services/doctor/rate_checks'
import { callbackChecks } from '#services/doctor/callback_checks'

export type DoctorReport = {
  /** The worst status of all lines. */
  status: CheckStatus
  generatedAt: number
  counts: Record<CheckStatus, number>
  results: CheckResult[]
}

/** Live checks ask nodes and the rate source: a short timeout each, whatever the RPC timeout setting. */
const LIVE_TIMEOUT_MS = 5000
/** The dashboard reuses the live checks' answer this long. */
export const LIVE_CACHE_MS = 60_000

type Check = {
  name: string
  title: string
  run: (
    context: DoctorContext
  ) => CheckResult | CheckResult[] | Promise<CheckResult | CheckResult[]>
}

/** Checks that read this process's configuration and the database only. */
const LOCAL_CHECKS: Check[] = [
  { name: 'app_url', title: 'Public address (APP_URL)', run: appUrlCheck },
  { name: 'app_key', title: 'Encryption key (APP_KEY)', run: appKeyCheck },
  { name: 'migrations', title: 'Database migrations', run: () => migrationsCheck() },
  { name: 'sqlite', title: 'SQLite use', run: sqliteCheck },
  { name: 'admin_2fa', title: 'Console administrators with 2FA', run: () => adminTwoFactorCheck() },
  { name: 'chain_setup', title: 'Chains: wallets and tokens', run: () => chainSetupChecks() },
  { name: 'callbacks', title: 'Merchant callbacks', run: (context) => callbackChecks(context.now) },
]

/** Checks that ask the outside (chain nodes, the rate source). */
const LIVE_CHECKS: Check[] = [
  { name: 'rpc_endpoints', title: 'RPC endpoints', run: liveChainChecks },
  { name: 'rates', title: 'Exchange rates', run: (context) => rateChecks(context.now) },
]

/** A check that throws is reported as such: the others still run. */
async function runCheck(check: Check, context: DoctorContext): Promise<CheckResult[]> {
  try {
    const outcome = await check.run(context)
    return Array.isArray(outcome) ? outcome : [outcome]
  } catch (error) {
    // Knex prefixes its errors with the SQL: the reason is after it.
    const text = error instanceof Error ? error.message.split('\n')[0] : String(error)
    const message =
      /^(select|insert|update|delete|with)\b/i.test(text) && text.includes(' - ')
        ? text.slice(text.lastIndexOf(' - ') + 3)
        : text
    return [
      result(
        check.name,
        check.title,
        'warning',
        `This check could not run: ${message}`,
        'Run node ace doctor again; if it persists, look at the log for this error'
      ),
    ]
  }
}

function sqliteSettings(): { dialect: string; sqlitePath: string } {
  const config = db.getRawConnection(db.primaryConnectionName)?.config
  const client = String(config?.client ?? '')
  if (client.includes('sqlite')) {
    const connection = config?.connection as { filename?: string } | undefined
    return { dialect: 'sqlite', sqlitePath: connection?.filename ?? '' }
  }
  return { dialect: client === 'pg' || client === 'postgres' ? 'postgres' : client, sqlitePath: '' }
}

function readOrEmpty(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}

/** The configuration this process runs with. */
export async function currentContext(
  overrides: Partial<DoctorContext> = {}
): Promise<DoctorContext> {
  const rpcTimeoutSeconds = await settings.get('chains.rpc_timeout_seconds').catch(() => 10)
  return {
    now: Date.now(),
    nodeEnv: String(env.get('NODE_ENV') ?? 'development'),
    appUrl: String(env.get('APP_URL') ?? ''),
    appKey: env.get('APP_KEY').release(),
    generatedAppKey: (readOrEmpty(app.makePath('storage', 'app_key')) ?? '').trim(),
    ...sqliteSettings(),
    selfIsGateway: false,
    mounts: readOrEmpty('/proc/mounts'),
    rpcTimeoutMs: Math.min(rpcTimeoutSeconds * 1000, LIVE_TIMEOUT_MS),
    ...overrides,
  }
}

function report(results: CheckResult[], now: number): DoctorReport {
  const counts: Record<CheckStatus, number> = { ok: 0, warning: 0, problem: 0 }
  for (const line of results) counts[line.status]++
  return { status: worst(results.map((line) => line.status)), generatedAt: now, counts, results }
}

/**
 * What is wrong or risky in this installation (`node ace doctor`, the
 * dashboard's "Health checks"): each check gives one line or more, with a
 * status, what it found and how to fix it. Checks run side by side; one
 * that fails is reported, never the end of the report.
 */
export type DashboardHealth = DoctorReport & {
  /** When the live checks (nodes, rate source) shown were asked; null: not yet, they are being asked now. */
  liveCheckedAt: number | null
}

export class Doctor {
  #live: { at: number; results: CheckResult[] } | null = null
  #liveRun: Promise<void> | null = null
  #generation = 0

  /** Every check, live ones asked now. */
  async run(overrides: Partial<DoctorContext> = {}): Promise<DoctorReport> {
    const context = await currentContext(overrides)
    const resultsByCheck = await Promise.all(
      [...LOCAL_CHECKS, ...LIVE_CHECKS].map((check) => runCheck(check, context))
    )
    const results = resultsByCheck.flat()
    return report(results, context.now)
  }

  /**
   * For the dashboard, which never waits for a node: the local checks now,
   * the live ones (nodes, rate source) as last asked, at most a minute
   * ago. When that answer is missing or older, it is asked for in the
   * background and the page shows it from the next load on.
   */
  async forDashboard(overrides: Partial<DoctorContext> = {}): Promise<DashboardHealth> {
    const context = await currentContext({ selfIsGateway: true, ...overrides })
    const localByCheck = await Promise.all(LOCAL_CHECKS.map((check) => runCheck(check, context)))
    const local = localByCheck.flat()
    const answer = this.#live
    if ((!answer || context.now - answer.at >= LIVE_CACHE_MS) && !this.#liveRun) {
      const generation = this.#generation
      this.#liveRun = Promise.all(LIVE_CHECKS.map((check) => runCheck(check, context)))
        .then((lines) => {
          if (generation === this.#generation)
            this.#live = { at: Date.now(), results: lines.flat() }
        })
        .finally(() => {
          if (generation === this.#generation) this.#liveRun = null
        })
    }
    return {
      ...report([...local, ...(answer?.results ?? [])], context.now),
      liveCheckedAt: answer?.at ?? null,
    }
  }

  /** Resolves once the live checks asked for in the background have answered. */
  async liveSettled(): Promise<void> {
    await this.#liveRun
  }

  /** Tests: forget the cached live answer (a run in flight is dropped). */
  reset() {
    this.#generation++
    this.#live = null
    this.#liveRun = null
  }
}

/** Lines worst first, in check order within a status. */
export function worstFirst(results: CheckResult[]): CheckResult[] {
  return results
    .map((line, index) => ({ line, index }))
    .sort((a, b) => STATUS_ORDER[b.line.status] - STATUS_ORDER[a.line.status] || a.index - b.index)
    .map(({ line }) => line)
}

const doctor = new Doctor()
export default doctor
