import { createHash } from 'node:crypto'
import {
  SEVERITIES,
  type NotificationMessage,
  type Severity,
} from '#notifications/notification_channel'

/**
 * What the e-mail channel writes: subject, plain text and HTML of one event
 * or of a digest. Pure functions (no SMTP), every value from the event
 * escaped in the HTML and kept on one line in the subject.
 */

export type RenderedMail = {
  subject: string
  text: string
  html: string
  messageId: string
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char])
}

/** One line: no line breaks or other control characters (a header stays one header). */
export function oneLine(value: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = value.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** Only http(s) links become anchors; anything else (javascript:, data:) stays text. */
function safeHref(url: string): string | null {
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null
  } catch {
    return null
  }
}

/**
 * A Message-ID that is the same for every attempt of one delivery (the
 * idempotency key is): a mail client shows a message sent twice once.
 */
export function messageIdFor(keys: string[], domain: string): string {
  const hash = createHash('sha256').update(keys.join('\n')).digest('hex').slice(0, 32)
  const host = /^[A-Za-z0-9.-]+$/.test(domain) ? domain : 'gateway.invalid'
  return `<notify.${hash}@${host}>`
}

function severityRank(severity: Severity): number {
  return SEVERITIES.indexOf(severity)
}

function when(message: NotificationMessage): string {
  return new Date(message.occurredAt).toISOString().replace('.000Z', 'Z')
}

function textBlock(message: NotificationMessage): string[] {
  const lines = [`[${message.severity}] ${oneLine(message.title, 500)}`]
  for (const line of message.lines) lines.push(oneLine(line, 1000))
  for (const link of message.links) lines.push(`${oneLine(link.label)}: ${oneLine(link.url, 2000)}`)
  lines.push(`Event: ${oneLine(message.event)} (#${message.eventId}), ${when(message)}`)
  return lines
}

const SEVERITY_COLOURS: Record<Severity, string> = {
  info: '#2563eb',
  warning: '#b45309',
  critical: '#b91c1c',
}

function htmlBlock(message: NotificationMessage): string {
  const parts = [
    `<h2 style="font-size:16px;margin:0 0 8px"><span style="color:${SEVERITY_COLOURS[message.severity]}">[${escapeHtml(message.severity)}]</span> ${escapeHtml(oneLine(message.title, 500))}</h2>`,
  ]
  if (message.lines.length > 0) {
    parts.push(
      `<p style="margin:0 0 8px">${message.lines.map((line) => escapeHtml(oneLine(line, 1000))).join('<br>')}</p>`
    )
  }
  if (message.links.length > 0) {
    const links = message.links.map((link) => {
      const href = safeHref(link.url)
      const label = escapeHtml(oneLine(link.label))
      return href
        ? `<li><a href="${escapeHtml(href)}">${label}</a></li>`
        : `<li>${label}: ${escapeHtml(oneLine(link.url, 2000))}</li>`
    })
    parts.push(`<ul style="margin:0 0 8px">${links.join('')}</ul>`)
  }
  parts.push(
    `<p style="margin:0;color:#6b7280;font-size:12px">${escapeHtml(oneLine(message.event))} (#${message.eventId}), ${escapeHtml(when(message))}</p>`
  )
  return parts.join('\n')
}

function htmlDocument(title: string, body: string): string {
  return [
    '<!doctype html>',
    '<html><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title></head>`,
    '<body style="font-family:sans-serif;font-size:14px;color:#111827">',
    body,
    '</body></html>',
  ].join('\n')
}

/** One event, one message: subject `[severity] title`. */
export function renderMessage(message: NotificationMessage, domain: string): RenderedMail {
  const subject = oneLine(`[${message.severity}] ${oneLine(message.title)}`, 250)
  return {
    subject,
    text: `${textBlock(message).join('\n')}\n`,
    html: htmlDocument(subject, htmlBlock(message)),
    messageId: messageIdFor([message.idempotencyKey], domain),
  }
}

/**
 * Several events, one message: the subject counts them by event name (most
 * frequent first), the body lists the most severe first, then oldest first.
 */
export function renderDigest(messages: NotificationMessage[], domain: string): RenderedMail {
  const counts = new Map<string, number>()
  for (const message of messages) {
    const name = oneLine(message.event, 60)
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  const byCount = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  const shown = byCount.slice(0, 5).map(([name, count]) => `${count} ${name}`)
  if (byCount.length > 5) shown.push(`${byCount.length - 5} more kinds`)
  const worst = messages.reduce<Severity>(
    (highest, message) =>
      severityRank(message.severity) > severityRank(highest) ? message.severity : highest,
    'info'
  )
  const critical = messages.filter((message) => message.severity === 'critical').length
  const noun = messages.length === 1 ? 'event' : 'events'
  const tally = worst === 'critical' ? ` (${critical} critical)` : ''
  const subject = oneLine(`[gateway] ${messages.length} ${noun}${tally}: ${shown.join(', ')}`, 250)

  const ordered = messages
    .map((message, index) => ({ message, index }))
    .sort(
      (a, b) =>
        severityRank(b.message.severity) - severityRank(a.message.severity) ||
        a.message.occurredAt - b.message.occurredAt ||
        a.index - b.index
    )
    .map(({ message }) => message)

  const text = [`${messages.length} ${noun}: ${shown.join(', ')}`, '']
  for (const message of ordered) text.push(...textBlock(message), '')
  const html = ordered.map(htmlBlock).join('\n<hr style="border:0;border-top:1px solid #e5e7eb">\n')
  return {
    subject,
    text: text.join('\n'),
    html: htmlDocument(
      subject,
      `<p style="margin:0 0 12px">${escapeHtml(text[0])}</p>\n<hr style="border:0;border-top:1px solid #e5e7eb">\n${html}`
    ),
    // The same set of events gives the same Message-ID, whatever their order.
    messageId: messageIdFor(messages.map((message) => message.idempotencyKey).sort(), domain),
  }
}
