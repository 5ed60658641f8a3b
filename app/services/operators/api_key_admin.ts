import { randomBytes } from 'node:crypto'
import { inject } from '@adonisjs/core'
import { AuditLog } from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'
import ApiKey from '#models/api_key'
import { OperatorError } from '#support/operator_error'
import { isUniqueViolation } from '#support/database_errors'
import { refuseSealedLookalike } from '#services/operators/sealed_lookalike'

const SECRET_PATTERN = /^[\x21-\x7e]{16,128}$/
const PID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/
/** Generated pids are numeric (compat shops need one) and start above the installation's 1000. */
const FIRST_NUMERIC_PID = 1000

export type NewApiKey = { pid?: string; secret?: string; ips?: string[]; note?: string }
export type ApiKeyChanges = { enabled?: boolean; ips?: string[] }

function newSecret() {
  return randomBytes(32).toString('hex')
}

function checkSecret(secret: string) {
  if (!SECRET_PATTERN.test(secret)) {
    throw new OperatorError('The secret must be 16 to 128 printable characters without spaces')
  }
  refuseSealedLookalike(secret)
}

function checkIpEntries(entries: string[]) {
  for (const entry of entries) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry)) {
      throw new OperatorError(`"${entry}" is not an IP address or CIDR range`)
    }
  }
}

/**
 * Merchant API keys as operators manage them (ace commands today, the
 * admin console later): every input is checked here, and a refusal is an
 * OperatorError whose message is meant for the operator.
 */
@inject()
export class ApiKeyAdmin {
  constructor(protected audit: AuditLog) {}

  list() {
    return ApiKey.query().orderBy('id')
  }

  async find(pid: string) {
    const apiKey = await ApiKey.findBy('pid', pid)
    if (!apiKey) throw new OperatorError(`No API key with pid ${pid}`)
    return apiKey
  }

  /** A new active key; without `pid` the next free numeric one, without `secret` a random one. */
  async create(input: NewApiKey) {
    const secret = input.secret ?? newSecret()
    checkSecret(secret)
    checkIpEntries(input.ips ?? [])
    if (input.pid !== undefined && !PID_PATTERN.test(input.pid)) {
      throw new OperatorError('The pid must be 1 to 32 letters, digits, "_" or "-" (numeric for compat shops)')
    }
    const pid = input.pid ?? (await this.#nextNumericPid())
    try {
      return await this.audit.change(
        (trx) =>
          ApiKey.create(
            {
              pid,
              secretKey: secret, // encrypted by the model
              status: 'active',
              ipAllowlist: (input.ips ?? []).join(','),
              note: input.note ?? '',
            },
            { client: trx }
          ),
        (key) => ({ action: 'api_key.create', subjectType: 'api_key', subjectId: key.pid, after: snapshot.apiKey(key) })
      )
    } catch (error) {
      if (isUniqueViolation(error)) throw new OperatorError(`An API key with pid ${pid} already exists`)
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
    if (changes.ips !== undefined) {
      checkIpEntries(changes.ips)
      apiKey.ipAllowlist = changes.ips.join(',')
    }
    return this.#save(apiKey, 'api_key.update', before)
  }

  #save(apiKey: ApiKey, action: string, before: ReturnType<typeof snapshot.apiKey>) {
    return this.audit.change(
      async (trx) => {
        apiKey.useTransaction(trx)
        await apiKey.save()
        return apiKey
      },
      (saved) => ({ action, subjectType: 'api_key', subjectId: saved.pid, before, after: snapshot.apiKey(saved) })
    )
  }

  async #nextNumericPid() {
    const numeric = (await ApiKey.all()).map((key) => key.pid).filter((value) => /^\d{1,15}$/.test(value))
    return String(Math.max(FIRST_NUMERIC_PID, ...numeric.map((value) => Number.parseInt(value, 10))) + 1)
  }
}
