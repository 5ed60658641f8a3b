import type { AuditRow } from '#services/audit/audit_log'

/**
 * An audit row as the audit page's presenter reads it: `ops@example.test`
 * disabling ethereum (no before / after unless told), with `overrides`.
 */
export function auditRow(overrides: Partial<AuditRow>): AuditRow {
  return {
    id: 1,
    createdAt: 1_750_000_000_000,
    actorKind: 'user',
    actorUserId: 3,
    actor: 'ops@example.test',
    action: 'chain.update',
    subjectType: 'chain',
    subjectId: 'ethereum',
    before: null,
    after: null,
    ip: '203.0.113.9',
    requestId: 'req-1',
    ...overrides,
  }
}
