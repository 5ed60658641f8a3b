import { assignableKind, type UnmatchedRow } from '#services/operators/unmatched_payment_admin'
import i18nManager from '@adonisjs/i18n/services/main'
import type { I18n } from '@adonisjs/i18n'
import { utcMinute } from '#services/admin/admin_format'
import { positionInWords } from '#services/admin/order_detail'
import { Decimal, isDecimalLiteral } from '#support/text/money'

/**
 * How the console's unmatched inbox shows a row: its kind in words and in
 * a badge tone, whether it is a transfer an order may be paid with or a
 * notice that is only marked as handled, its state and who settled it in
 * words (the admin's language: resources/lang/<locale>/admin/unmatched.json,
 * English unless told). The rules (what may be assigned) are UnmatchedPaymentAdmin's.
 */

type Tone = 'info' | 'neutral' | 'warning' | 'danger' | 'success'

/** Each kind's badge tone; its words (badge, what the reason explains) are `admin.unmatched.kind.<kind>` and `.reason_label.<kind>`. */
const KIND_TONES: Record<string, Tone> = {
  transfer: 'info',
  unreadable: 'neutral',
  unexplained: 'warning',
  reorged: 'danger',
}

const english = () => i18nManager.locale('en')

/** The kind filter's choices ('' first: any kind), in the admin's words. */
export function kindChoices(i18n: I18n = english()) {
  return [
    { value: '', label: i18n.t('admin.unmatched.filter.any_kind') },
    ...Object.keys(KIND_TONES).map((value) => ({
      value,
      label: i18n.t('admin.unmatched.kind.' + value),
    })),
  ]
}

export type UnmatchedView = UnmatchedRow & {
  /** The amount as written everywhere else (PostgreSQL's trailing zeros dropped: "13.80000000" → "13.8"); '' when unknown. */
  amountText: string
  kindLabel: string
  kindTone: Tone
  reasonLabel: string
  /** A transfer an order may be paid with (assign form); else a notice, marked as handled with a note. */
  assignable: boolean
  /** The position in words ("log 3"); '' when the row names none. */
  positionText: string
  /** The heights an unexplained amount came in between (its reference `balance:<from>-<to>`); null for the other kinds. */
  heights: { from: string; to: string } | null
  /** The state as the badge says it ("waiting", "assigned", "dismissed", "handled"). */
  stateLabel: string
  stateTone: Tone
  /** Set aside by the gateway itself (a notice explained later), not by an operator. */
  bySystem: boolean
  /** Who dismissed it (or marked it as handled) and when, in a sentence; '' unless dismissed. */
  settled: string
  /** The page's one-line summary. */
  headline: string
}

const STATE_TONES: Record<string, Tone> = {
  open: 'warning',
  assigned: 'success',
  dismissed: 'neutral',
}

function amountText(amount: string): string {
  return isDecimalLiteral(amount) ? new Decimal(amount).toFixed() : amount
}

function headline(row: UnmatchedRow, i18n: I18n): string {
  const values = { amount: amountText(row.amount), token: row.token, network: row.network }
  if (row.kind === 'unexplained') return i18n.t('admin.unmatched.headline.unexplained', values)
  if (row.kind === 'reorged') {
    return i18n.t('admin.unmatched.headline.reorged', {
      network: row.network,
      tradeId: row.orderTradeId ?? i18n.t('admin.unmatched.headline.unknown_order'),
    })
  }
  if (row.amount === '') return i18n.t('admin.unmatched.headline.unreadable', values)
  return i18n.t('admin.unmatched.headline.transfer', values)
}

function settled(row: UnmatchedRow, assignable: boolean, bySystem: boolean, i18n: I18n): string {
  if (row.state !== 'dismissed') return ''
  const at = utcMinute(row.dismissedAt)
  if (bySystem) return i18n.t('admin.unmatched.settled.system', { at })
  return assignable
    ? i18n.t('admin.unmatched.settled.dismissed', { who: row.dismissedBy, at })
    : i18n.t('admin.unmatched.settled.handled', { who: row.dismissedBy, at })
}

/** A row as the console shows it, in `i18n`'s language (English unless given). */
export function presentUnmatched(row: UnmatchedRow, i18n: I18n = english()): UnmatchedView {
  const known = row.kind in KIND_TONES
  const words = {
    label: known ? i18n.t('admin.unmatched.kind.' + row.kind) : row.kind,
    tone: KIND_TONES[row.kind] ?? 'neutral',
    reasonLabel: i18n.t(
      'admin.unmatched.reason_label.' + (known ? row.kind : 'other'),
      {},
      row.kind
    ),
  }
  const assignable = assignableKind(row.kind)
  const bySystem = row.state === 'dismissed' && row.dismissedBy === 'system'
  const window = row.kind === 'unexplained' ? /^balance:(\d+)-(\d+)$/.exec(row.reference) : null
  return {
    ...row,
    amountText: amountText(row.amount),
    kindLabel: words.label,
    kindTone: words.tone,
    reasonLabel: words.reasonLabel,
    assignable,
    positionText: row.position === '' ? '' : positionInWords(i18n, row.position),
    heights: window ? { from: window[1], to: window[2] } : null,
    stateLabel: i18n.t(
      'admin.unmatched.state.' +
        (row.state === 'open'
          ? 'waiting'
          : row.state === 'dismissed' && !assignable
            ? 'handled'
            : row.state),
      {},
      row.state
    ),
    stateTone: STATE_TONES[row.state] ?? 'neutral',
    bySystem,
    settled: settled(row, assignable, bySystem, i18n),
    headline: headline(row, i18n),
  }
}
