import { assignableKind, type UnmatchedRow } from '#services/operators/unmatched_payment_admin'
import { describePosition } from '#services/transfer_references'
import { utcMinute } from '#services/console/console_format'
import { Decimal, isDecimalLiteral } from '#support/money'

/**
 * How the console's unmatched inbox shows a row: its kind in words and in
 * a badge tone, whether it is a transfer an order may be paid with or a
 * notice that is only marked as handled, its state and who settled it in
 * words. The rules (what may be assigned) are UnmatchedPaymentAdmin's.
 */

type Tone = 'info' | 'neutral' | 'warning' | 'danger' | 'success'

type KindWords = {
  /** The badge's text. */
  label: string
  tone: Tone
  /** What the reason explains, as the detail page's label. */
  reasonLabel: string
}

const KINDS: Record<string, KindWords> = {
  transfer: { label: 'Paid nothing', tone: 'info', reasonLabel: 'Why it paid nothing' },
  unreadable: { label: 'Unreadable', tone: 'neutral', reasonLabel: 'Why it could not be read' },
  unexplained: {
    label: 'Unexplained incoming amount',
    tone: 'warning',
    reasonLabel: 'What was seen',
  },
  reorged: { label: 'Reorganised payment', tone: 'danger', reasonLabel: 'What happened' },
}

/** The kind filter's choices ('' first: any kind). */
export const KIND_CHOICES = [
  { value: '', label: 'Any kind' },
  ...Object.entries(KINDS).map(([value, words]) => ({ value, label: words.label })),
]

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

function headline(row: UnmatchedRow): string {
  const amount = amountText(row.amount)
  if (row.kind === 'unexplained')
    return `${amount} ${row.token} came in on ${row.network} that no transfer seen explains.`
  if (row.kind === 'reorged') {
    return `The payment of order ${row.orderTradeId ?? '(unknown)'} on ${row.network} came from a block a reorganisation replaced.`
  }
  if (row.amount === '') return `An unreadable transfer received on ${row.network}.`
  return `${amount} ${row.token} received on ${row.network}.`
}

function settled(row: UnmatchedRow, assignable: boolean, bySystem: boolean): string {
  if (row.state !== 'dismissed') return ''
  if (bySystem) return `Set aside by the gateway itself at ${utcMinute(row.dismissedAt)}.`
  return `${assignable ? 'Dismissed' : 'Marked as handled'} by ${row.dismissedBy} at ${utcMinute(row.dismissedAt)}.`
}

export function presentUnmatched(row: UnmatchedRow): UnmatchedView {
  const words = KINDS[row.kind] ?? { label: row.kind, tone: 'neutral', reasonLabel: 'Reason' }
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
    positionText: row.position === '' ? '' : describePosition(row.position),
    heights: window ? { from: window[1], to: window[2] } : null,
    stateLabel:
      row.state === 'open'
        ? 'waiting'
        : row.state === 'dismissed' && !assignable
          ? 'handled'
          : row.state,
    stateTone: STATE_TONES[row.state] ?? 'neutral',
    bySystem,
    settled: settled(row, assignable, bySystem),
    headline: headline(row),
  }
}
