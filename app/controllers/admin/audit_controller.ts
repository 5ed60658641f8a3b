import type { HttpContext } from '@adonisjs/core/http'
import User from '#models/user'
import auditLog from '#services/audit/audit_log'
import {
  actionFilterOptions,
  presentAuditRow,
  subjectTypeOptions,
} from '#services/admin/audit_presenter'
import { utcTime, relativeTime } from '#services/admin/admin_format'
import { auditQuery, readAuditFilters } from '#validators/admin/audit_filters'
import { adminUrl } from '#admin/admin_paths'

const PAGE_SIZE = 50

/**
 * The audit log, read only: there is no route that changes or removes a
 * row (and the database refuses both). Filters are a GET form; pages go
 * by keyset (newest first), so a deep page costs what the first does.
 */
export default class AuditController {
  constructor(protected audit = auditLog) {}

  async index({ request, response, view, i18n }: HttpContext) {
    const parsed = readAuditFilters(request.qs())
    const refused = Object.keys(parsed.errors).length > 0
    const page = refused
      ? { rows: [], next: null }
      : await this.audit.list(parsed.filters, { limit: PAGE_SIZE, after: parsed.after })
    // The form is shown again with its messages and no result.
    if (refused) response.status(422)

    const now = Date.now()
    const rows = page.rows.map((row) => ({
      ...presentAuditRow(row, i18n),
      when: utcTime(row.createdAt, i18n),
      ago: relativeTime(row.createdAt, now, i18n),
    }))
    const users = await User.query().select('email').orderBy('email')
    const base = adminUrl('/audit')
    return view.render('admin/audit/index', {
      rows,
      values: parsed.values,
      errors: parsed.errors,
      filtered: parsed.active,
      actionGroups: actionFilterOptions(parsed.values.action || undefined, i18n),
      subjectTypes: subjectTypeOptions(i18n),
      actors: [...users.map((user) => user.email), 'system', 'anonymous'],
      nextUrl: page.next ? base + auditQuery(parsed.values, page.next) : null,
      firstUrl: parsed.after ? base + auditQuery(parsed.values) : null,
      clearUrl: base,
      pageSize: PAGE_SIZE,
    })
  }
}
