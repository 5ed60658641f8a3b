import { randomBytes } from 'node:crypto'
import auditLog from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'
import ApiKey from '#models/api_key'
import { OperatorError } from '#support/cli/operator_error'
import { isUniqueViolation } from '#support/database/database_errors'
import { refuseSealedLookalike } from '#services/operators/sealed_lookalike'
import {
  MAX_ALLOWLIST_ENTRIES,
  parseAllowListEntry,
  splitAllowList,
} from '#support/http/ip_allowlist'
import { maskSecret } from '#support/http/redaction'
import { OrderStatus } from '#models/order'
import db from '@adonisjs/lucid/services/db'

const SECRET_PATTERN = /^[\x21-\x7e]{16,128}$/
const PID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/
/**
 * Generated pids are numeric (a callback format may need one: CallbackFormat.refusesKey)
 * and start above the installation's 1000.
 */
const FIRST_NUMERIC_PID = 1000

const NOTE_MAX_LENGTH = 255

export type NewApiKey = { pid?: string; secret?: string; ips?: string[]; note?: string }
/** Each entry of `ips` may itself be a list (commas, spaces, new lines): a pasted text is one entry. */
export type ApiKeyChanges = { enabled?: boolean; ips?: string[]; note?: string }

/** A key's orders: merchant orders created (children of a switch left out) and orders paid. */
export type ApiKeyUsage = { ordersCreated: number; ordersPaid: number }

/** A key as the console lists it: never its secret, only the hint of its last characters. */
export type ApiKeyOverview = {
  pid: string
  enabled: boolean
  note: string
  allowedIps: string[]
  lastUsedAt: number | null
  createdAt: number
  secretHint: string
} & ApiKeyUsage

function newSecret() {
  return randomBytes(32).toString('hex')
}

function checkSecret(secret: string) {
  if (!SECRET_PATTERN.test(secret)) {
    throw new OperatorError('The secret must be 16 to 128 printable characters without spaces', {
      key: 'secret_format',
    })
  }
  refuseSealedLookalike(secret)
}

/**
 * The allow-list as stored (comma-separated, duplicates dropped), or a
 * refusal naming the first entry that is not an IP address or CIDR range.
 */
export function normalizeIpAllowlist(given: string[]): string {
  const entries = [...new Set(given.flatMap((text) => splitAllowList(text)))]
  for (const entry of entries) {
    if (!parseAllowListEntry(entry)) {
      throw new OperatorError(
        `"${entry.slice(0, 64)}" is not an IP address or CIDR range (examples: 203.0.113.7, 203.0.113.0/24, 2001:db8::/32)`,
        { key: 'not_an_ip', args: { entry: entry.slice(0, 64) } }
      )
    }
  }
  if (entries.length > MAX_ALLOWLIST_ENTRIES) {
    throw new OperatorError(
      `At most ${MAX_ALLOWLIST_ENTRIES} addresses or ranges can be allowed (${entries.length} given)`,
      { key: 'allowlist_too_long', args: { max: MAX_ALLOWLIST_ENTRIES, given: entries.length } }
    )
  }
  return entries.join(',')
}

/** The note as stored (trimmed), or a refusal. */
export function normalizeNote(note: string): string {
  const trimmed = note.trim()
  if ([...trimmed].length > NOTE_MAX_LENGTH) {
    throw new OperatorError(`The note must be at most ${NOTE_MAX_LENGTH} characters`, {
      key: 'api_key_note_too_long',
      args: { max: NOTE_MAX_LENGTH },
    })
  }
  // Refuses control characters (line breaks, tabs, escapes): that is the point of this regex.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(trimmed))
    throw new OperatorError('The note must be one line of text', { key: 'note_one_line' })
  return trimmed
}

/** A pid an operator chooses (generated ones are numeric). */
export function checkPid(pid: string) {
  if (!PID_PATTERN.test(pid)) {
    throw new OperatorError(
      'The pid must be 1 to 32 letters, digits, "_" or "-" (numeric for shops of a callback format that needs one)',
      { key: 'pid_format' }
    )
  }
}

/** Last characters of the secret; "unreadable" when the APP_KEY that sealed it is gone. */
function secretHint(key: ApiKey): string {
  try {
    return maskSecret(key.signingSecret())
  } catch {
    return 'unreadable (APP_KEY?)'
  }
}

function describe(key: ApiKey, usage: Map<number, ApiKeyUsage>): ApiKeyOverview {
  return {
    pid: key.pid,
    enabled: key.isActive,
    note: key.note,
    allowedIps: key.allowedIps,
    lastUsedAt: key.lastUsedAt,
    createdAt: key.createdAt,
    secretHint: secretHint(key),
    ...(usage.get(key.id) ?? { ordersCreated: 0, ordersPaid: 0 }),
  }
}

/**
 * Merchant API keys as operators manage them (ace commands today, the
 * admin console later): every input is checked here, and a refusal is an
 * OperatorError whose message is meant for the operator.
 */
export class ApiKeyAdmin {
  constructor(protected audit = auditLog) {}

  list() {
    return ApiKey.query().orderBy('id')
  }

  /** Every key with its use: what the console's list shows. */
  async overview(): Promise<ApiKeyOverview[]> {
    const keys = await this.list()
    const usage = await this.usage(keys.map((key) => key.id))
    return keys.map((key) => describe(key, usage))
  }

  /** One key with its use (refused as OperatorError when no such key). */
  async overviewOf(pid: string): Promise<ApiKeyOverview> {
    const key = await this.find(pid)
    return describe(key, await this.usage([key.id]))
  }

  /**
   * Orders per key, in one grouped query over orders(api_key_id, status,
   * parent_id) (an index-only scan on PostgreSQL). A switch's child order
   * is the same merchant order and is not counted as created; it counts as
   * paid when it is the one paid.
   */
  async usage(apiKeyIds: number[]): Promise<Map<number, ApiKeyUsage>> {
    const usage = new Map<number, ApiKeyUsage>()
    if (apiKeyIds.length === 0) return usage
    const rows = await db
      .from('orders')
      .whereIn('api_key_id', apiKeyIds)
      .groupBy('api_key_id')
      .select('api_key_id')
      .select(db.raw('SUM(CASE WHEN parent_id IS NULL THEN 1 ELSE 0 END) AS created'))
      .select(db.raw('SUM(CASE WHEN status = ? THEN 1 ELSE 0 END) AS paid', [OrderStatus.PAID]))
    for (const row of rows) {
      usage.set(Number(row.api_key_id), {
        ordersCreated: Number(row.created ?? 0),
        ordersPaid: Number(row.paid ?? 0),
      })
    }
    return usage
  }

  async find(pid: string) {
    const apiKey = await ApiKey.findBy('pid', pid)
    if (!apiKey)
      throw new OperatorError(`No API key with pid ${pid}`, { key: 'no_api_key', args: { pid } })
    return apiKey
  }

  /** A new active key; without `pid` the next free numeric one, without `secret` a random one. */
  async create(input: NewApiKey) {
    const secret = input.secret ?? newSecret()
    checkSecret(secret)
    const ipAllowlist = normalizeIpAllowlist(input.ips ?? [])
    const note = normalizeNote(input.note ?? '')
    if (input.pid !== undefined) checkPid(input.pid)
    const pid = input.pid ?? (await this.#nextNumericPid())
    try {
      return await this.audit.change(
        (trx) =>
          ApiKey.create(
            {
              pid,
              secretKey: secret, // encrypted by the model
              status: 'active',
              ipAllowlist,
              note,
            },
            { client: trx }
          ),
        (key) => ({
          action: 'api_key.create',
          subjectType: 'api_key',
          subjectId: key.pid,
          after: snapshot.apiKey(key),
        })
      )
    } catch (error) {
      if (isUniqueViolation(error))
        throw new OperatorError(`An API key with pid ${pid} already exists`, {
          key: 'api_key_exists',
          args: { pid },
        })
      throw error
    }
  }

  async rotate(pid: string, secret?: string) {
    const apiKey = await this.find(pid)
    const value = secret ?? newSecret()
    checkSecret(value)
    const before = snapshot.apiKey(apiKey)
    apiKey.secretKey = value // encrypted by the model
    return this.#save(apiKey, 'api_key.rotate', before)
  }

  async update(pid: string, changes: ApiKeyChanges) {
    const apiKey = await this.find(pid)
    const before = snapshot.apiKey(apiKey)
    if (changes.enabled !== undefined) apiKey.status = changes.enabled ? 'active' : 'disabled'
    if (changes.ips !== undefined) apiKey.ipAllowlist = normalizeIpAllowlist(changes.ips)
    if (changes.note !== undefined) apiKey.note = normalizeNote(changes.note)
    // Nothing changed: nothing to save, nothing to audit.
    if (!apiKey.$isDirty) return apiKey
    return this.#save(apiKey, 'api_key.update', before)
  }

  #save(apiKey: ApiKey, action: string, before: ReturnType<typeof snapshot.apiKey>) {
    return this.audit.change(
      async (trx) => {
        apiKey.useTransaction(trx)
        await apiKey.save()
        return apiKey
      },
      (saved) => ({
        action,
        subjectType: 'api_key',
        subjectId: saved.pid,
        before,
        after: snapshot.apiKey(saved),
      })
    )
  }

  async #nextNumericPid() {
    const keys = await ApiKey.all()
    const numeric = keys.map((key) => key.pid).filter((value) => /^\d{1,15}$/.test(value))
    return String(
      Math.max(FIRST_NUMERIC_PID, ...numeric.map((value) => Number.parseInt(value, 10))) + 1
    )
  }
}

const apiKeyAdmin = new ApiKeyAdmin()
export default apiKeyAdmin
