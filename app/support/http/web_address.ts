/**
 * True when `text` is an absolute http(s) address with a host: the only
 * kind of link a payer is ever sent to. Refuses javascript:, data: and
 * other schemes, relative and protocol-relative paths (`/x`, `//host/x`),
 * and text with spaces or control characters (a browser would read those
 * differently from this check).
 */
export function isWebAddress(text: unknown): text is string {
  if (typeof text !== 'string' || text === '' || text.length > 2048) return false
  // Refuses whitespace and control characters: that is the point of this regex.
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(text)) return false
  if (!/^https?:\/\//i.test(text)) return false
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return false
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
}
