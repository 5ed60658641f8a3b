/** How bad a finding is: `problem` fails `node ace doctor`, `warning` only with --strict. */
export type CheckStatus = 'ok' | 'warning' | 'problem'

/** One line of the doctor's report. */
export type CheckResult = {
  /** Stable name of the check (monitoring keys on it): app_url, rpc_endpoints… */
  check: string
  /** The check in words. */
  title: string
  /** What the line is about when a check reports several (a network, a currency); null otherwise. */
  subject: string | null
  status: CheckStatus
  /** What was found, in one line. */
  finding: string
  /** The command or setting that fixes it; null when there is nothing to do. */
  fix: string | null
}

/** What the checks are run against: the process's own configuration unless a caller (a test) says otherwise. */
export type DoctorContext = {
  now: number
  nodeEnv: string
  appUrl: string
  appKey: string
  /** The key kept in storage/app_key ('' when there is none): the one generated when APP_KEY is not set. */
  generatedAppKey: string
  dialect: 'sqlite' | 'postgres' | string
  /** Absolute path of the SQLite database ('' on PostgreSQL or in memory). */
  sqlitePath: string
  /** This process keeps the database open as part of the gateway (the web process showing the dashboard). */
  selfIsGateway: boolean
  /** Text of /proc/mounts; null when the system has none. */
  mounts: string | null
  /** Timeout of each live RPC call. */
  rpcTimeoutMs: number
}

export const STATUS_ORDER: Record<CheckStatus, number> = { ok: 0, warning: 1, problem: 2 }

export function result(
  check: string,
  title: string,
  status: CheckStatus,
  finding: string,
  fix: string | null = null,
  subject: string | null = null
): CheckResult {
  return { check, title, subject, status, finding, fix: status === 'ok' ? null : fix }
}

/** The worst status of a list (ok when empty). */
export function worst(statuses: CheckStatus[]): CheckStatus {
  return statuses.reduce<CheckStatus>(
    (acc, status) => (STATUS_ORDER[status] > STATUS_ORDER[acc] ? status : acc),
    'ok'
  )
}

/** "1 callback", "3 callbacks". */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`
}

/** Seconds, rounded, for messages. */
export function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`
}
