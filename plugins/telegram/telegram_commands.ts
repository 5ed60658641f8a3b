import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import settings from '#settings/settings_service'
import { DashboardStats } from '#services/admin/dashboard_stats'
import { ORDER_STATUS_NAMES } from '#services/admin/order_search'
import { groupedDecimal, relativeTime } from '#services/admin/admin_format'
import { toDecimalString } from '#support/text/money'
import { cleanText, escapeHtml, cut } from '#plugins/telegram/telegram_html'

/** `/mute` takes 1 to this many minutes (a day); `/mute 0` unmutes. */
export const MAX_MUTE_MINUTES = 1440
/** Orders shown for an `/order` that matches several (an order id used by several merchants). */
const MAX_ORDERS_SHOWN = 3

export type Command = { name: string; args: string }

/**
 * A command as Telegram delivers it: `/name args`, or `/name@bot args` in a
 * group. One addressed to another bot (`/status@other_bot`) is not ours.
 */
export function parseCommand(text: string, botUsername: string | null): Command | null {
  const match = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{1,64}))?(?:\s+([\s\S]*))?$/.exec(
    text.trim()
  )
  if (!match) return null
  if (match[2] && botUsername && match[2].toLowerCase() !== botUsername.toLowerCase()) return null
  return { name: match[1].toLowerCase(), args: (match[3] ?? '').trim() }
}

export const HELP = [
  '<b>Commands</b>',
  '/status: scanners, callback outbox, today’s orders',
  '/order &lt;trade_id or order_id&gt;: one order',
  `/mute &lt;minutes&gt;: only critical events for that long (1–${MAX_MUTE_MINUTES}); /mute 0 unmutes`,
  '/help: this list',
].join('\n')

/** The answer to a command from an allowed chat (HTML for sendMessage). */
export async function answerCommand(command: Command, now = Date.now()): Promise<string> {
  switch (command.name) {
    case 'status':
      return statusAnswer(now)
    case 'order':
      return orderAnswer(command.args)
    case 'mute':
      return muteAnswer(command.args, now)
    case 'help':
    case 'start':
      return HELP
    default:
      return `Unknown command /${escapeHtml(command.name)}.\n\n${HELP}`
  }
}

/** notify.time_zone (the core's), UTC when it is not there. */
async function timeZone(): Promise<string> {
  try {
    const zone = await settings.read('notify.time_zone')
    return typeof zone === 'string' && zone !== '' ? zone : 'UTC'
  } catch {
    return 'UTC'
  }
}

function localTime(epochMs: number | null, zone: string): string {
  if (epochMs === null || epochMs === 0) return '—'
  return DateTime.fromMillis(epochMs, { zone }).toFormat('yyyy-LL-dd HH:mm:ss ZZZZ')
}

/** Scanners of the enabled chains, the callback outbox, and today's orders (the dashboard's figures). */
async function statusAnswer(now: number): Promise<string> {
  const zone = await timeZone()
  const figures = await new DashboardStats().read({ now, timeZone: zone })
  const lines = [`<b>Status</b> at ${escapeHtml(localTime(now, zone))}`, '', '<b>Scanners</b>']
  const scanners = figures.scanners.filter((scanner) => scanner.enabled)
  if (scanners.length === 0) lines.push('no enabled chain')
  for (const scanner of scanners) {
    const block = scanner.scannedHeight !== null ? `block ${scanner.scannedHeight}` : 'no block yet'
    const head =
      scanner.headHeight !== null && scanner.lagBlocks !== null && scanner.lagBlocks !== '0'
        ? ` (head ${scanner.headHeight}, ${scanner.lagBlocks} behind)`
        : ''
    const error = scanner.lastError !== '' ? `, error: ${cut(scanner.lastError, 160)}` : ''
    lines.push(
      escapeHtml(
        `• ${scanner.network}: ${block}${head}, scanned ${relativeTime(scanner.lastScanAt, now)} [${scanner.state}]${error}`
      )
    )
  }
  const outbox = figures.outbox
  lines.push(
    '',
    '<b>Callbacks</b>',
    `${outbox.pending} pending (${outbox.retrying} retrying), ${outbox.failed} failed`
  )
  const today = figures.periods.today
  lines.push(
    '',
    `<b>Today</b> (${escapeHtml(zone)})`,
    `${today.orders.total} created, ${today.orders.paid} paid`
  )
  if (today.volumeByToken.length > 0) {
    lines.push(
      `Paid: ${today.volumeByToken
        .map((entry) => escapeHtml(`${groupedDecimal(entry.amount)} ${entry.token}`))
        .join(', ')}`
    )
  }
  return lines.join('\n')
}

/** One order by trade id, or the merchant orders with that order id (newest first). */
async function orderAnswer(args: string): Promise<string> {
  const id = args.split(/\s+/)[0] ?? ''
  if (id === '') return 'Usage: /order &lt;trade_id or order_id&gt;'
  if (id.length > 64) return 'Order not found.'
  const zone = await timeZone()
  const rows = await db
    .from('orders')
    .where('trade_id', id)
    .orWhere((query) => query.where('order_id', id).whereNull('parent_id'))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(MAX_ORDERS_SHOWN + 1)
  if (rows.length === 0) return `Order <code>${escapeHtml(cleanText(id))}</code> not found.`
  const shown = rows.slice(0, MAX_ORDERS_SHOWN).map((row) => describeOrder(row, zone))
  if (rows.length > MAX_ORDERS_SHOWN)
    shown.push(`(more orders have the order id ${escapeHtml(id)})`)
  // Each field is bounded (ids of 32 characters, a reference cut at 200): far below 4096.
  return shown.join('\n\n')
}

function describeOrder(row: Record<string, any>, zone: string): string {
  const status = ORDER_STATUS_NAMES[Number(row.status)] ?? `status ${row.status}`
  const actual = toDecimalString(String(row.actual_amount))
  const lines = [
    `<b>Order ${escapeHtml(row.trade_id)}</b>: ${escapeHtml(status)}`,
    `Merchant order: ${escapeHtml(cut(cleanText(String(row.order_id)), 64))} (${escapeHtml(row.pid)})`,
    `Amount: ${escapeHtml(`${groupedDecimal(toDecimalString(String(row.amount)))} ${row.currency}`)}`,
  ]
  if (row.token || row.network) {
    lines.push(
      `Pay: ${escapeHtml(`${groupedDecimal(actual)} ${row.token || '—'} on ${row.network || '—'}`)}`
    )
  }
  lines.push(
    `Created: ${escapeHtml(localTime(Number(row.created_at), zone))}`,
    `Paid: ${escapeHtml(localTime(row.paid_at === null ? null : Number(row.paid_at), zone))}`
  )
  if (row.block_transaction_id)
    lines.push(`Transaction: ${escapeHtml(cut(row.block_transaction_id, 200))}`)
  lines.push(
    `Callback: ${escapeHtml(String(row.callback_status))}, ${Number(row.callback_attempts)} attempt(s)`
  )
  return lines.join('\n')
}

/** Sets notify.telegram.muted_until (audited like any setting change). */
async function muteAnswer(args: string, now: number): Promise<string> {
  const zone = await timeZone()
  if (!/^\d{1,5}$/.test(args)) {
    const until = Number(await settings.read('notify.telegram.muted_until'))
    const state = until > now ? `muted until ${localTime(until, zone)}` : 'not muted'
    return `Usage: /mute &lt;minutes&gt; (1–${MAX_MUTE_MINUTES}), /mute 0 unmutes. Now ${escapeHtml(state)}.`
  }
  const minutes = Number(args)
  if (minutes > MAX_MUTE_MINUTES)
    return `At most ${MAX_MUTE_MINUTES} minutes (a day); /mute 0 unmutes.`
  if (minutes === 0) {
    await settings.set('notify.telegram.muted_until', '0')
    return 'Unmuted: every event is sent again.'
  }
  const until = now + minutes * 60_000
  await settings.set('notify.telegram.muted_until', String(until))
  return `Muted until ${escapeHtml(localTime(until, zone))}: only critical events are sent to Telegram until then.`
}
