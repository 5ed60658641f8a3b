import type { NotificationMessage, Severity } from '#notifications/notification_channel'

/**
 * Telegram's limit for one message: 4096 characters of text after the
 * entities are parsed (the markup does not count). Counted here in UTF-16
 * code units, which is what Telegram counts (an emoji outside the BMP is 2).
 */
export const MESSAGE_LIMIT = 4096

const MARKERS: Record<Severity, string> = {
  info: 'ℹ️',
  warning: '⚠️',
  critical: '🚨',
}

/** A run of text: plain, bold, or a link. Its text is plain (escaped when rendered). */
export type Piece = { text: string; bold?: boolean; href?: string }

/** Text for HTML parse mode: the three characters Telegram requires escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** An attribute value between double quotes: the quote escaped as well. */
export function escapeAttribute(text: string): string {
  return escapeHtml(text).replace(/"/g, '&quot;')
}

/**
 * What Telegram accepts as text: well-formed UTF-16 (a lone surrogate
 * would make the JSON body invalid UTF-8 and the request refused) and no
 * NUL.
 */
export function cleanText(text: string): string {
  return text.toWellFormed().replace(/\0/g, '')
}

/** Only web links become anchors (Telegram refuses a text link whose URL it does not accept). */
function linkable(url: string): boolean {
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'https:' || parsed.protocol === 'http:'
  } catch {
    return false
  }
}

/** `text` cut to `max` UTF-16 units without splitting a surrogate pair, with "…" when cut. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text
  if (max <= 0) return ''
  let end = max - 1
  // Never leave half of a pair: a high surrogate at the end goes too.
  const last = text.charCodeAt(end - 1)
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--
  return `${text.slice(0, end)}…`
}

/** The message as HTML for sendMessage, within Telegram's limit. */
export function renderMessage(message: NotificationMessage, limit = MESSAGE_LIMIT): string {
  const head: Piece[] = [
    { text: `${MARKERS[message.severity] ?? MARKERS.info} ` },
    { text: cut(cleanText(message.title), 512), bold: true },
  ]
  const body = message.lines.map((line) => cleanText(line))
  const links: Piece[][] = message.links.map((link) => {
    const label = cut(cleanText(link.label), 200)
    const url = cleanText(link.url)
    if (linkable(url) && url.length <= 2048) return [{ text: '\n' }, { text: label, href: url }]
    return [{ text: `\n${label}: ${cut(url, 300)}` }]
  })
  return renderPieces(fit(head, body, links, limit))
}

/** Pieces (already within the limit) as HTML: every text escaped, every tag closed. */
export function renderPieces(pieces: Piece[]): string {
  return pieces
    .map((piece) => {
      const text = escapeHtml(piece.text)
      if (piece.href !== undefined) return `<a href="${escapeAttribute(piece.href)}">${text}</a>`
      return piece.bold ? `<b>${text}</b>` : text
    })
    .join('')
}

export function visibleLength(pieces: Piece[]): number {
  return pieces.reduce((sum, piece) => sum + piece.text.length, 0)
}

/**
 * Title, lines, links, cut to `limit` visible characters: the title and
 * links are kept whole when they fit (they are short), the lines take what
 * remains, the last one cut with "…". Cutting happens on the plain text,
 * before escaping, so no tag or entity is ever split.
 */
function fit(head: Piece[], lines: string[], links: Piece[][], limit: number): Piece[] {
  const pieces = [...head]
  let used = visibleLength(head)
  const keptLinks: Piece[][] = []
  let linksLength = 0
  // Links after the lines, but their room is reserved first (up to half the message).
  const linkRoom = Math.floor(limit / 2)
  for (const link of links) {
    const length = visibleLength(link)
    if (linksLength + length > linkRoom || used + linksLength + length > limit) break
    keptLinks.push(link)
    linksLength += length
  }
  const separator = lines.length > 0 && keptLinks.length > 0 ? 1 : 0
  let room = limit - used - linksLength - separator
  for (const line of lines) {
    const text = `\n${line}`
    if (text.length <= room) {
      pieces.push({ text })
      room -= text.length
      used += text.length
      continue
    }
    if (room >= 2) pieces.push({ text: cut(text, room) })
    else if (room === 1) pieces.push({ text: '…' })
    break
  }
  if (separator) pieces.push({ text: '\n' })
  for (const link of keptLinks) pieces.push(...link)
  return pieces
}
