/**
 * Whether an error means "the database cannot be reached now" (as opposed
 * to a fault of the query or of our code): the request is answered HTTP
 * 503 with Retry-After, and the next one tries again (the pool reconnects
 * by itself).
 *
 * - network errors of the PostgreSQL client (refused, reset, timed out,
 *   unreachable, name not resolved), its "Connection terminated" and
 *   "not queryable" errors;
 * - PostgreSQL SQLSTATE class 08 (connection exception), 57P01/57P02/57P03
 *   (server shutting down, crashed, starting) and 53300 (too many
 *   connections);
 * - knex's "Timeout acquiring a connection" (every pool connection busy or
 *   none can be made);
 * - SQLite SQLITE_BUSY / SQLITE_LOCKED: another process held the write lock
 *   beyond busy_timeout (10 s); transient too, so the same 503.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])
const PG_CODES = new Set(['57P01', '57P02', '57P03', '53300'])
const MESSAGES = [
  /Connection terminated/i,
  /Client has encountered a connection error and is not queryable/i,
  /Client was closed and is not queryable/i,
  /timeout exceeded when trying to connect/i,
  /Timeout acquiring a connection/i,
]

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false
  const { code, name, message, errors } = error as {
    code?: unknown
    name?: unknown
    message?: unknown
    errors?: unknown
  }
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || PG_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true
    if (/^SQLITE_(BUSY|LOCKED)/.test(code)) return true
  }
  if (name === 'KnexTimeoutError') return true
  if (typeof message === 'string' && MESSAGES.some((pattern) => pattern.test(message))) return true
  // Node gives an AggregateError when every address of a host refused.
  // Not `cause`: a failed fetch of a rate source or an RPC node carries
  // ECONNREFUSED there, and is not the database's.
  return Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))
}

/** Seconds a client is asked to wait before trying again. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

export const DATABASE_UNAVAILABLE_MESSAGE =
  'Service temporarily unavailable: the database cannot be reached'
