import { stdSerializers } from '@adonisjs/core/logger'

/**
 * Keeps secrets out of logs, stored error texts and command output. RPC
 * services take their keys in the URL (Infura `/v3/<key>`, Alchemy
 * `/v2/<key>`, `?api-key=<key>`, `https://user:key@host`), and the errors
 * of HTTP clients quote that URL; those parts are masked wherever a URL
 * appears in a text.
 */
export const MASK = '***'

/** Query parameters whose value is a credential. */
const SECRET_PARAMETER = /key|token|secret|auth|pass|sig|cred|session/i
/** A path segment that looks like a key: long, letters and digits mixed. */
const SECRET_SEGMENT = /^(?=[^/]*\d)(?=[^/]*[A-Za-z])[A-Za-z0-9_~.-]{20,}$/
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi

/** The URL with its credentials masked (user info, key-like query values and path segments). */
export function redactUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return text
  }
  let masked = false
  if (url.username || url.password) {
    url.username = MASK
    url.password = ''
    masked = true
  }
  for (const name of [...url.searchParams.keys()]) {
    if (SECRET_PARAMETER.test(name)) {
      url.searchParams.set(name, MASK)
      masked = true
    }
  }
  const segments = url.pathname.split('/')
  if (segments.some((segment) => SECRET_SEGMENT.test(segment))) {
    url.pathname = segments
      .map((segment) => (SECRET_SEGMENT.test(segment) ? MASK : segment))
      .join('/')
    masked = true
  }
  // Untouched URLs are returned exactly as written (no normalisation).
  return masked ? url.toString() : text
}

/**
 * The parts of a configured URL that may be credentials (user info, long
 * path segments, key-like or long query values): masked literally by
 * redactSecrets wherever they appear, even in a URL quoted cut or
 * re-encoded.
 */
export function urlCredentials(text: string): string[] {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return []
  }
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part)
    } catch {
      return part
    }
  }
  return [
    decode(url.username),
    decode(url.password),
    ...url.pathname
      .split('/')
      .map(decode)
      .filter((segment) => segment.length >= 16),
    ...[...url.searchParams.entries()]
      .filter(([name, value]) => SECRET_PARAMETER.test(name) || value.length >= 16)
      .map(([, value]) => value),
  ].filter((part) => part.length >= 4)
}

/**
 * `text` with every URL redacted and every known secret value (e.g. the
 * chain's API key, sent in a header) replaced by the mask.
 */
export function redactSecrets(text: string, known: readonly string[] = []): string {
  let result = text
  for (const secret of known) {
    if (secret.length >= 4) result = result.split(secret).join(MASK)
  }
  return result.replace(URL_IN_TEXT, (url) => redactUrl(url))
}

/** How a secret is shown in listings: its last 4 characters at most. */
export function maskSecret(plain: string): string {
  if (plain === '') return ''
  return plain.length >= 16 ? `…${plain.slice(-4)}` : MASK
}

/**
 * An error as logged: type, message and stack (with their causes), every
 * URL in them redacted, plus its simple fields (code, status ...). Objects
 * hanging off an error (an HTTP client's request config with its headers,
 * a response) are left out: they may carry an API key.
 */
export function serializeError(error: unknown, known: readonly string[] = []): unknown {
  if (typeof error === 'string') return redactSecrets(error, known)
  if (!(error instanceof Error)) return error
  const standard = stdSerializers.err(error) as unknown as Record<string, unknown>
  const safe: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(standard)) {
    if (name === 'raw') continue
    if (typeof value === 'string') safe[name] = redactSecrets(value, known)
    else if (typeof value === 'number' || typeof value === 'boolean') safe[name] = value
  }
  return safe
}

/** How deep redactLogFields looks into a log line's objects. */
const LOG_DEPTH = 6

/**
 * A log line's fields with every URL in their strings redacted (user
 * info, key-, token- and signature-like query values such as a GET
 * callback's `sign`, key-like path segments), however deep. Only plain
 * objects and arrays are walked; errors are left to the `err` serializer
 * (serializeError), other objects as they are. Fields without a URL are
 * returned as they are, unchanged and uncopied.
 */
export function redactLogFields<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return (value.includes('://') ? redactSecrets(value) : value) as T
  if (value === null || typeof value !== 'object' || depth >= LOG_DEPTH) return value
  if (Array.isArray(value)) {
    let changed = false
    const items = value.map((item) => {
      const redacted = redactLogFields(item, depth + 1)
      if (redacted !== item) changed = true
      return redacted
    })
    return (changed ? items : value) as T
  }
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return value
  let copy: Record<string, unknown> | null = null
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    const redacted = redactLogFields(field, depth + 1)
    if (redacted !== field) {
      copy ??= { ...(value as Record<string, unknown>) }
      copy[key] = redacted
    }
  }
  return (copy ?? value) as T
}
