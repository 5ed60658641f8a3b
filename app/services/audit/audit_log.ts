import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { actorLabel, currentAuditContext } from '#services/audit/audit_context'
import { maskForAudit } from '#services/audit/audit_masking'

/** One change: what was acted on, and its state before and after (null: did not exist / no longer exists). */
export type AuditEntry = {
  action: string
  subjectType: string
  subjectId: string | number
  before?: unknown
  after?: unknown
}

export type AuditRow = {
  id: number
  createdAt: number
  actorKind: string
  actorUserId: number | null
  actor: string
  action: string
  subjectType: string
  subjectId: string
  before: unknown
  after: unknown
  ip: string | null
  requestId: string | null
}

export type AuditFilters = {
  actor?: string
  /** The exact action. */
  action?: string
  /** Actions starting with this text ("auth." → every sign-in event; "auth.2fa_" → the two-factor ones). */
  actionPrefix?: string
  subjectType?: string
  subjectId?: string
  /** Client address, exactly as recorded. */
  ip?: string
  /** From this time (epoch ms, included) … */
  since?: number
  /** … to this one (excluded). */
  until?: number
}

/** A page of rows, newest first; `next` continues after the last one (null: no more). */
export type AuditPage = { rows: AuditRow[]; next: string | null }

const MAX_PAGE = 200

function json(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(maskForAudit(value))
}

function parsed(text: string | null): unknown {
  return text === null ? null : JSON.parse(text)
}

/** Cursor of a row: its time and id, so rows of the same millisecond are neither skipped nor repeated. */
function cursorOf(row: { createdAt: number; id: number }) {
  return Buffer.from(`${row.createdAt}:${row.id}`).toString('base64url')
}

function readCursor(cursor: string): [number, number] | null {
  const match = /^(\d+):(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString())
  return match ? [Number(match[1]), Number(match[2])] : null
}

/**
 * The audit log: every change made through the operator services, with its
 * author from the audit context (app/audit/audit_context.ts). Rows are only
 * ever appended.
 */
export class AuditLog {
  /** Appends one row, inside the caller's transaction when given (the change and its row commit together). */
  async record(
    entry: AuditEntry,
    client: QueryClientContract | TransactionClientContract = db.connection()
  ) {
    const { actor, ip, requestId } = currentAuditContext()
    await client.table('audit_log').insert({
      created_at: Date.now(),
      actor_kind: actor.kind,
      actor_user_id: actor.kind === 'user' ? actor.userId : null,
      actor: actorLabel(actor),
      action: entry.action,
      subject_type: entry.subjectType,
      subject_id: String(entry.subjectId),
      before: json(entry.before),
      after: json(entry.after),
      ip: ip ?? null,
      request_id: requestId ?? null,
    })
  }

  /**
   * Runs a change in a transaction and records what `describe` says of its
   * result in the same transaction: a change is never left unaudited, nor
   * a row written for a change that was rolled back.
   */
  async change<T>(
    work: (trx: TransactionClientContract) => Promise<T>,
    describe: (result: T) => AuditEntry
  ): Promise<T> {
    return db.transaction(async (trx) => {
      const result = await work(trx)
      await this.record(describe(result), trx)
      return result
    })
  }

  /** Newest first, filtered; `limit` at most 200; `after` is the `next` of the previous page. */
  async list(
    filters: AuditFilters = {},
    page: { limit?: number; after?: string | null } = {}
  ): Promise<AuditPage> {
    const limit = Math.min(Math.max(Math.trunc(page.limit ?? 50), 1), MAX_PAGE)
    const query = db.from('audit_log')
    if (filters.actor !== undefined) query.where('actor', filters.actor)
    if (filters.action !== undefined) query.where('action', filters.action)
    if (filters.actionPrefix !== undefined && filters.actionPrefix !== '') {
      // Not LIKE: "_" (as in api_key.) is one of its wildcards, and SQLite's LIKE ignores case.
      query.whereRaw('substr(action, 1, ?) = ?', [
        filters.actionPrefix.length,
        filters.actionPrefix,
      ])
    }
    if (filters.subjectType !== undefined) query.where('subject_type', filters.subjectType)
    if (filters.subjectId !== undefined) query.where('subject_id', filters.subjectId)
    if (filters.ip !== undefined) query.where('ip', filters.ip)
    if (filters.since !== undefined) query.where('created_at', '>=', filters.since)
    if (filters.until !== undefined) query.where('created_at', '<', filters.until)
    if (page.after) {
      const cursor = readCursor(page.after)
      if (cursor) {
        const [createdAt, id] = cursor
        query.where((older) =>
          older
            .where('created_at', '<', createdAt)
            .orWhere((same) => same.where('created_at', createdAt).where('id', '<', id))
        )
      }
    }
    const raw = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
    const rows: AuditRow[] = raw.slice(0, limit).map((row: Record<string, any>) => ({
      id: Number(row.id),
      createdAt: Number(row.created_at),
      actorKind: row.actor_kind,
      actorUserId: row.actor_user_id === null ? null : Number(row.actor_user_id),
      actor: row.actor,
      action: row.action,
      subjectType: row.subject_type,
      subjectId: row.subject_id,
      before: parsed(row.before),
      after: parsed(row.after),
      ip: row.ip,
      requestId: row.request_id,
    }))
    const last = rows.at(-1)
    return { rows, next: raw.length > limit && last ? cursorOf(last) : null }
  }
}

const auditLog = new AuditLog()
export default auditLog
