import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import type { HttpRequest } from '@adonisjs/core/http'
import proxyAddr from 'proxy-addr'

/** Whether the hop at `address` (i-th from the server) is a proxy we trust. */
export type TrustFunction = (address: string, hop: number) => boolean

/** Names proxy-addr knows for well-known ranges. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal'])

const USAGE =
  'use none, loopback, true, or a comma-separated list of IP addresses and CIDR ranges (e.g. 10.0.0.0/8,fd00::/8)'

/**
 * Reads the TRUST_PROXY setting: whose X-Forwarded-For is believed when the
 * client address is worked out (rate limits, API-key IP allow-lists, logs).
 *
 * - `loopback` (default): only a proxy on the same host;
 * - `none`: nobody, the socket's peer is the client;
 * - `true`: every hop, so the left-most address counts: only safe when
 *   every request comes through a proxy that overwrites the header;
 * - a list of addresses, CIDR ranges and the names loopback, linklocal,
 *   uniquelocal: hops inside it are skipped from the right.
 *
 * Throws with a message naming the bad entry, so that start-up fails.
 */
export function parseTrustProxy(value: string | undefined): TrustFunction {
  const text = (value ?? '').trim()
  if (text === '' || text.toLowerCase() === 'loopback') return proxyAddr.compile('loopback')
  if (['none', 'false'].includes(text.toLowerCase())) return () => false
  if (text.toLowerCase() === 'true') return () => true

  const entries = text.split(/[\s,]+/).filter((entry) => entry !== '')
  for (const entry of entries) {
    if (NAMED_RANGES.has(entry)) continue
    const [address, prefix, ...rest] = entry.split('/')
    const family = isIP(address)
    const maxPrefix = family === 6 ? 128 : 32
    const validPrefix =
      prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= maxPrefix)
    if (family === 0 || !validPrefix || rest.length > 0) {
      throw new Error(`TRUST_PROXY: "${entry}" is not an IP address or CIDR range; ${USAGE}`)
    }
  }
  return proxyAddr.compile(entries)
}

const clientIps = new WeakMap<IncomingMessage, string>()

/**
 * request.ip() (config/app.ts `getIp`), worked out once per request and
 * kept: once the connection is closed (after an answer with Connection:
 * close, or by a client gone) its socket no longer knows the peer's
 * address, and working it out would throw, e.g. in the access-log line
 * written after the answer. An address that cannot be worked out is ''.
 */
export function clientIpOnce(request: HttpRequest, workOut: () => string): string {
  const known = clientIps.get(request.request)
  if (known !== undefined) return known
  let ip = ''
  try {
    ip = workOut() ?? ''
  } catch {
    // the connection is gone already
  }
  clientIps.set(request.request, ip)
  return ip
}
