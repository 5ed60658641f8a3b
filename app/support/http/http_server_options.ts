import type { ServerOptions } from 'node:http'
import env from '#start/env'

/**
 * Timeouts of the HTTP server (bin/server.ts), so that slow clients cannot
 * hold connections open: all headers within HTTP_HEADERS_TIMEOUT (10 s),
 * the whole request within HTTP_REQUEST_TIMEOUT (30 s), an idle keep-alive
 * connection closed after HTTP_KEEP_ALIVE_TIMEOUT (5 s). Node answers 408
 * and closes the connection.
 */
export function httpServerOptions(): ServerOptions {
  const headersTimeout = env.get('HTTP_HEADERS_TIMEOUT') * 1000
  return {
    headersTimeout,
    requestTimeout: env.get('HTTP_REQUEST_TIMEOUT') * 1000,
    keepAliveTimeout: env.get('HTTP_KEEP_ALIVE_TIMEOUT') * 1000,
    // Node enforces the two timeouts above only at this interval (30 s by default).
    connectionsCheckingInterval: Math.min(1000, headersTimeout),
  }
}
