import { utcSecond, type FormatI18n } from '#services/admin/admin_format'
import type { AuditRow } from '#services/audit/audit_log'
import { adminUrl } from '#admin/admin_paths'
import { groupedKeys } from '#services/admin/settings_groups'

/**
 * How the console's audit page shows a row: the action in words, the
 * author, the subject, and what changed (before → after) as one line per
 * field. Actions it does not know (added later, or by a plugin) are shown
 * from their name ("order.mark_paid" → "Order: mark paid").
 *
 * Each function takes the request's i18n (`ctx.i18n`, keys console.audit.*)
 * as an optional last argument; without it the words are the English
 * below, as they always were.
 */

/** The English below, or its key's text in the admin's language. */
function say(
  i18n: FormatI18n | undefined,
  key: string,
  english: string,
  values?: Record<string, string>
): string {
  return i18n ? i18n.t(`admin.audit.${key}`, values) : english
}

/** The console's badge tones. */
export type Tone = 'neutral' | 'success' | 'warning' | 'danger'

/** One changed field. `before` / `after` null: the field did not exist on that side. */
export type DiffLine = {
  path: string
  before: string | null
  after: string | null
  change: 'added' | 'removed' | 'changed'
}

export type AuditRowView = {
  id: number
  createdAt: number
  actor: { label: string; kind: string; detail: string }
  action: { name: string; label: string; tone: Tone }
  /** `href`: the console page of the subject, when it has one. */
  subject: { type: string; id: string; label: string; href: string | null }
  /** 'created': only `after` (shown as a list), 'removed': only `before`, 'changed': both, 'none': neither. */
  shape: 'created' | 'removed' | 'changed' | 'none'
  changes: DiffLine[]
  ip: string | null
  requestId: string | null
}

const ACTIONS: Record<string, { label: string; tone?: Tone }> = {
  'auth.login': { label: 'Signed in', tone: 'success' },
  'auth.login_failed': { label: 'Sign-in failed', tone: 'danger' },
  'auth.login_throttled': { label: 'Sign-in refused: too many attempts', tone: 'danger' },
  'auth.logout': { label: 'Signed out' },
  'user.create': { label: 'Admin user created' },
  'user.password': { label: 'Password changed', tone: 'warning' },
  'user.role': { label: 'Role changed', tone: 'warning' },
  'user.2fa_start': { label: 'Two-factor enrolment started' },
  'user.2fa_enable': { label: 'Two-factor enabled', tone: 'success' },
  'user.2fa_disable': { label: 'Two-factor disabled', tone: 'warning' },
  'user.2fa_reset': { label: 'Two-factor reset', tone: 'warning' },
  'user.disabled': { label: 'Account disabled', tone: 'warning' },
  'user.enabled': { label: 'Account enabled', tone: 'success' },
  'api_key.create': { label: 'API key created' },
  'api_key.rotate': { label: 'API key secret rotated', tone: 'warning' },
  'api_key.update': { label: 'API key changed' },
  'chain.create': { label: 'Chain added' },
  'chain.update': { label: 'Chain changed' },
  'token.create': { label: 'Token added' },
  'token.update': { label: 'Token changed' },
  'wallet.add': { label: 'Wallet added' },
  'wallet.remove': { label: 'Wallet removed', tone: 'warning' },
  'wallet.remove_forced': { label: 'Wallet removed while in use', tone: 'danger' },
  'wallet.update': { label: 'Wallet changed' },
  'api_key.test_callback': { label: 'Test callback sent' },
  'order.mark_paid': { label: 'Order marked paid', tone: 'warning' },
  'order.close': { label: 'Order closed', tone: 'warning' },
  'order.callback_resend': { label: 'Callback sent again' },
  'unmatched.assign': { label: 'Unmatched payment assigned', tone: 'warning' },
  'unmatched.dismiss': { label: 'Unmatched payment dismissed' },
  'rate.set': { label: 'Rate set' },
  'rate.markup_clear': { label: 'Rate markup cleared' },
  'setting.set': { label: 'Setting changed' },
  'notification.test': { label: 'Test notification sent' },
  'notification.target_resumed': { label: 'Notification target resumed', tone: 'warning' },
}

const SUBJECT_TYPES: Record<string, string> = {
  api_key: 'API key',
  chain: 'Chain',
  token: 'Token',
  wallet: 'Wallet',
  rate: 'Rate',
  setting: 'Setting',
  user: 'Admin user',
  order: 'Order',
  callback: 'Callback',
  unmatched_payment: 'Unmatched payment',
  notification_channel: 'Notification channel',
}

/** Groups of the action filter: "<prefix>*" selects every action of the group. */
const ACTION_GROUPS: { prefix: string; label: string }[] = [
  { prefix: 'auth.', label: 'Sign-in' },
  { prefix: 'user.', label: 'Admin users' },
  { prefix: 'api_key.', label: 'API keys' },
  { prefix: 'chain.', label: 'Chains' },
  { prefix: 'token.', label: 'Tokens' },
  { prefix: 'wallet.', label: 'Wallets' },
  { prefix: 'rate.', label: 'Rates' },
  { prefix: 'setting.', label: 'Settings' },
  { prefix: 'order.', label: 'Orders and callbacks' },
  { prefix: 'unmatched.', label: 'Unmatched payments' },
  { prefix: 'notification.', label: 'Notifications' },
]

const words = (text: string) =>
  text
    .replace(/[_.]+/g, ' ')
    .replace(/\b2fa\b/gi, 'two-factor')
    .trim()
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/** A known action's label (admin.audit.action.<action>). */
function knownActionLabel(action: string, i18n?: FormatI18n): string {
  return say(i18n, `action.${action}`, ACTIONS[action].label)
}

/** A group's label (admin.audit.group.<prefix without its dot>). */
function groupLabel(group: { prefix: string; label: string }, i18n?: FormatI18n): string {
  return say(i18n, `group.${group.prefix.slice(0, -1)}`, group.label)
}

export function actionLabel(action: string, i18n?: FormatI18n): { label: string; tone: Tone } {
  const known = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined
  if (known) return { label: knownActionLabel(action, i18n), tone: known.tone ?? 'neutral' }
  const tone: Tone = /fail|refus|denied|forced|locked|throttl/.test(action) ? 'danger' : 'neutral'
  if (action.startsWith('auth.2fa_')) {
    const step = words(action.slice(9))
    return {
      label: say(i18n, 'presenter.two_factor_action', `Two-factor sign-in: ${step}`, { step }),
      tone,
    }
  }
  const dot = action.indexOf('.')
  if (dot === -1) return { label: capitalised(words(action)), tone }
  return {
    label: `${capitalised(words(action.slice(0, dot)))}: ${words(action.slice(dot + 1))}`,
    tone,
  }
}

export function subjectTypeLabel(type: string, i18n?: FormatI18n): string {
  if (!Object.hasOwn(SUBJECT_TYPES, type)) return capitalised(words(type))
  return say(i18n, `subject_type.${type}`, SUBJECT_TYPES[type])
}

/** Options of the action filter: one group per kind, its "all of them" first, then each known action. */
export function actionFilterOptions(current?: string, i18n?: FormatI18n) {
  const groups = ACTION_GROUPS.map((group) => {
    const label = groupLabel(group, i18n)
    return {
      label,
      options: [
        {
          value: `${group.prefix}*`,
          label: say(i18n, 'presenter.group_all', `${label}: all`, { group: label }),
        },
        ...Object.keys(ACTIONS)
          .filter((action) => action.startsWith(group.prefix))
          .map((action) => ({ value: action, label: knownActionLabel(action, i18n) })),
      ],
    }
  })
  // Two-factor sign-in steps under Sign-in.
  groups[0].options.push({
    value: 'auth.2fa_*',
    label: say(i18n, 'presenter.two_factor_steps', 'Two-factor sign-in steps'),
  })
  const known = groups.some((group) => group.options.some((option) => option.value === current))
  if (current && !known)
    groups.push({
      label: say(i18n, 'presenter.other', 'Other'),
      options: [{ value: current, label: current }],
    })
  return groups
}

/** Subject types offered by the subject filter. */
export function subjectTypeOptions(i18n?: FormatI18n) {
  return Object.keys(SUBJECT_TYPES).map((value) => ({
    value,
    label: subjectTypeLabel(value, i18n),
  }))
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A value as one short line: strings as they are ("" shown as such), the rest as JSON. */
export function shownValue(value: unknown): string {
  if (typeof value === 'string') return value === '' ? '""' : value
  if (value === undefined) return ''
  return JSON.stringify(value)
}

/** A field named like a time (…At, …_at) holding epoch milliseconds. */
const TIME_FIELD = /(At|_at)$/
const EPOCH_MS_RANGE = [946_684_800_000, 4_102_444_800_000] // 2000 … 2100

/** A value under its field's name: times as UTC dates, the rest as shownValue. */
export function fieldValue(path: string, value: unknown): string {
  if (
    TIME_FIELD.test(path) &&
    Number.isInteger(value) &&
    (value as number) >= EPOCH_MS_RANGE[0] &&
    (value as number) < EPOCH_MS_RANGE[1]
  ) {
    return utcSecond(value as number)
  }
  return shownValue(value)
}

/** Leaves of an object as dotted paths; arrays and empty objects are leaves. */
function leaves(value: Record<string, unknown>, prefix = '', into = new Map<string, unknown>()) {
  for (const [key, entry] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key
    if (isPlainObject(entry) && Object.keys(entry).length > 0) leaves(entry, path, into)
    else into.set(path, entry)
  }
  return into
}

/**
 * What changed between two snapshots, one line per field (nested objects
 * flattened to dotted paths), in the order of the fields; unchanged
 * fields are left out. Snapshots that are not objects (a setting's value)
 * give one line with an empty path.
 */
export function auditDiff(before: unknown, after: unknown): DiffLine[] {
  const hasBefore = before !== null && before !== undefined
  const hasAfter = after !== null && after !== undefined
  if (!hasBefore && !hasAfter) return []
  if ((hasBefore && !isPlainObject(before)) || (hasAfter && !isPlainObject(after))) {
    if (hasBefore && hasAfter && JSON.stringify(before) === JSON.stringify(after)) return []
    return [
      {
        path: '',
        before: hasBefore ? shownValue(before) : null,
        after: hasAfter ? shownValue(after) : null,
        change: !hasBefore ? 'added' : !hasAfter ? 'removed' : 'changed',
      },
    ]
  }
  const old = hasBefore ? leaves(before as Record<string, unknown>) : new Map<string, unknown>()
  const now = hasAfter ? leaves(after as Record<string, unknown>) : new Map<string, unknown>()
  const lines: DiffLine[] = []
  for (const path of new Set([...old.keys(), ...now.keys()])) {
    const inBefore = old.has(path)
    const inAfter = now.has(path)
    if (inBefore && inAfter && JSON.stringify(old.get(path)) === JSON.stringify(now.get(path)))
      continue
    lines.push({
      path,
      before: inBefore ? fieldValue(path, old.get(path)) : null,
      after: inAfter ? fieldValue(path, now.get(path)) : null,
      change: !inBefore ? 'added' : !inAfter ? 'removed' : 'changed',
    })
  }
  return lines
}

function actorView(row: AuditRow, i18n?: FormatI18n) {
  if (row.actorKind === 'user')
    return {
      label: row.actor,
      kind: 'user',
      detail: say(i18n, 'presenter.actor_console', 'console'),
    }
  if (row.actorKind === 'ace')
    return {
      label: row.actor.replace(/^ace:/, ''),
      kind: 'ace',
      detail: say(i18n, 'presenter.actor_shell', 'shell (node ace)'),
    }
  if (row.actorKind === 'system')
    return {
      label: say(i18n, 'presenter.actor_gateway', 'Gateway'),
      kind: 'system',
      detail: say(i18n, 'presenter.actor_system', 'system'),
    }
  // A failed sign-in: nobody is signed in yet; the address and the e-mail tried say more.
  if (row.actorKind === 'visitor')
    return {
      label: say(i18n, 'presenter.actor_visitor', 'Not signed in'),
      kind: 'visitor',
      detail: say(i18n, 'presenter.actor_visitor_detail', 'visitor'),
    }
  return { label: row.actor, kind: row.actorKind, detail: row.actorKind }
}

/** The console page of a subject, for the kinds that have one (by the id the services audit them under). */
function subjectHref(type: string, id: string): string | null {
  if (id === '') return null
  const part = encodeURIComponent
  if (type === 'order') return adminUrl(`/orders/${part(id)}`)
  if (type === 'api_key') return adminUrl(`/api-keys/${part(id)}`)
  if (type === 'chain') return adminUrl(`/chains/${part(id)}`)
  if (type === 'token') {
    const [network, symbol] = id.split('/')
    return network && symbol ? adminUrl(`/chains/${part(network)}/tokens/${part(symbol)}`) : null
  }
  if (type === 'unmatched_payment') return /^\d+$/.test(id) ? adminUrl(`/unmatched/${id}`) : null
  if (type === 'rate') return adminUrl('/settings/rates')
  if (type === 'notification_channel') return adminUrl('/notifications')
  if (type === 'setting') {
    if (id.startsWith('notify.')) return adminUrl('/notifications')
    const group = groupedKeys().get(id)
    return group ? adminUrl(`/settings/${group}`) : null
  }
  return null
}

function subjectView(row: AuditRow, i18n?: FormatI18n) {
  const type = subjectTypeLabel(row.subjectType, i18n)
  const id = row.subjectId
  const href = subjectHref(row.subjectType, row.subjectId)
  if (row.subjectType === 'user') {
    const email = [row.after, row.before]
      .map((side) => (isPlainObject(side) ? side.email : undefined))
      .find(Boolean)
    if (typeof email === 'string') {
      // No id: a sign-in that matched no one (or is not told apart from one, on purpose).
      const label =
        id === ''
          ? say(i18n, 'presenter.sign_in_as', `Sign-in as ${email}`, { email })
          : say(i18n, 'presenter.subject_user', `${type} ${email} (#${id})`, { type, email, id })
      return { type: row.subjectType, id: row.subjectId, label, href }
    }
  }
  return {
    type: row.subjectType,
    id: row.subjectId,
    label:
      id === '' ? type : say(i18n, 'presenter.subject_id_label', `${type} ${id}`, { type, id }),
    href,
  }
}

export function presentAuditRow(row: AuditRow, i18n?: FormatI18n): AuditRowView {
  const hasBefore = row.before !== null && row.before !== undefined
  const hasAfter = row.after !== null && row.after !== undefined
  return {
    id: row.id,
    createdAt: row.createdAt,
    actor: actorView(row, i18n),
    action: { name: row.action, ...actionLabel(row.action, i18n) },
    subject: subjectView(row, i18n),
    shape:
      hasBefore && hasAfter ? 'changed' : hasAfter ? 'created' : hasBefore ? 'removed' : 'none',
    changes: auditDiff(row.before, row.after),
    ip: row.ip,
    requestId: row.requestId,
  }
}
