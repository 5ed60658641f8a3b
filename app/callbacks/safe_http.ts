import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import type { Agent } from 'undici'

/** A destination refused because it is not a public internet address. */
export class ForbiddenTargetError extends Error {}

const privateRanges = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv4')
}
// Besides the local ranges, every IPv6 form that carries or reaches an IPv4
// address is refused outright: through a NAT64 gateway, a 6to4 or Teredo
// relay, or the old IPv4-compatible notation, an address that looks global
// can lead to a private IPv4 host, and callbacks have no need of them.
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and IPv4-compatible (::a.b.c.d)
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96], // NAT64, well-known prefix
  ['64:ff9b:1::', 48], // NAT64, local-use prefix
  ['2001::', 32], // Teredo
  ['2002::', 16], // 6to4
] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv6')
}

/**
 * Loopback, private, link-local, CGNAT, multicast or reserved, or an IPv6
 * translation or tunnel address (NAT64, 6to4, Teredo, IPv4-compatible).
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return privateRanges.check(address, 'ipv4')
  if (family === 6) {
    const mapped = address.toLowerCase().match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/)
    if (mapped) return privateRanges.check(mapped[1], 'ipv4')
    return privateRanges.check(address, 'ipv6')
  }
  return true
}

export type SafeRequest = {
  method: 'GET' | 'POST'
  url: string
  headers: Record<string, string>
  body: string | null
}

export type SafeResponse = {
  status: number
  body: string
  /** Response headers, lower-case names. */
  headers: Record<string, string | string[] | undefined>
}

export type SafeRequestOptions = {
  timeoutMs: number
  allowPrivateTargets: boolean
  /** Response bytes kept; the rest is not read. */
  maxBodyBytes?: number
}

type LookupCallback = (
  error: Error | null,
  address?: string | LookupAddress[],
  family?: number
) => void

/**
 * The DNS lookup every callback connection goes through: unless private
 * targets are allowed, a name with any private or loopback address is
 * refused, and the socket connects to the addresses checked here (Node's
 * net.connect uses what lookup returns: no second resolution an attacker
 * could change in between).
 */
function guardedLookup(allowPrivateTargets: boolean) {
  return (
    hostname: string,
    lookupOptions: { all?: boolean; family?: number },
    callback: LookupCallback
  ) => {
    dnsLookup(
      hostname,
      { all: true, family: lookupOptions.family ?? 0 },
      (error, addresses: LookupAddress[]) => {
        if (error) return callback(error)
        if (!allowPrivateTargets) {
          const forbidden = addresses.find((entry) => isPrivateAddress(entry.address))
          if (forbidden) {
            return callback(
              new ForbiddenTargetError(
                `${hostname} resolves to ${forbidden.address}, a private or loopback address`
              )
            )
          }
        }
        if (lookupOptions.all) return callback(null, addresses)
        callback(null, addresses[0].address, addresses[0].family)
      }
    )
  }
}

/** Idle keep-alive connections to a merchant are closed after this long (or sooner if the merchant says so). */
const KEEP_ALIVE_MS = 10_000

/**
 * One undici Agent per value of callbacks.allow_private_targets: each keeps
 * its pool of keep-alive connections per merchant origin, and its connect
 * lookup applies that value. Flipping the setting switches Agents, so a
 * connection opened while private targets were allowed is never reused
 * once they are not.
 */
const agents = new Map<boolean, Agent>()

/**
 * undici (about 20 MB resident) is loaded on the first call to a merchant:
 * a web process that never calls one (callbacks are sent by the workers)
 * never holds it.
 */
const loadUndici = () => import('undici')

export async function callbackAgent(allowPrivateTargets: boolean): Promise<Agent> {
  let agent = agents.get(allowPrivateTargets)
  if (!agent) {
    const { Agent: UndiciAgent } = await loadUndici()
    // Another call may have created it while undici loaded.
    agent = agents.get(allowPrivateTargets)
    if (agent) return agent
    agent = new UndiciAgent({
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
      // The whole exchange is bounded by safeRequest's own deadline.
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { lookup: guardedLookup(allowPrivateTargets) as any },
    })
    agents.set(allowPrivateTargets, agent)
  }
  return agent
}

/** Closes the keep-alive connections (process shutdown, tests). */
export async function closeCallbackAgents() {
  const open = [...agents.values()]
  agents.clear()
  await Promise.allSettled(open.map((agent) => agent.close()))
}

/**
 * One HTTP(S) request to a merchant-supplied URL, guarded against server-side
 * request forgery: unless allowed, every address the host name resolves to
 * must be public, and the connection goes to the address that was checked
 * (no second resolution an attacker could change). Redirects are not
 * followed; the whole exchange is bounded by `timeoutMs`. Connections are
 * kept alive and reused per merchant origin (callbackAgent).
 */
export async function safeRequest(
  request: SafeRequest,
  options: SafeRequestOptions
): Promise<SafeResponse> {
  let url: URL
  try {
    url = new URL(request.url)
  } catch {
    throw new ForbiddenTargetError(`"${request.url}" is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ForbiddenTargetError(`only http and https URLs are called, not ${url.protocol}`)
  }
  // An address literal is connected to without a lookup: checked here.
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) && !options.allowPrivateTargets && isPrivateAddress(host)) {
    throw new ForbiddenTargetError(`${host} is a private or loopback address`)
  }

  const maxBodyBytes = options.maxBodyBytes ?? 65_536
  const timedOut = new Error(`timed out after ${Math.round(options.timeoutMs / 1000)} s`)
  const abort = new AbortController()
  const deadline = setTimeout(() => abort.abort(timedOut), options.timeoutMs)
  try {
    const { request: undiciRequest } = await loadUndici()
    const dispatcher = await callbackAgent(options.allowPrivateTargets)
    const response = await undiciRequest(url, {
      method: request.method,
      headers: {
        'user-agent': 'crypto-pay-gateway-callback/1',
        ...request.headers,
      },
      body: request.body ?? undefined,
      dispatcher,
      signal: abort.signal,
    })
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of response.body) {
      chunks.push(chunk as Buffer)
      size += (chunk as Buffer).length
      if (size >= maxBodyBytes) {
        // The rest is not read: the connection is dropped rather than drained.
        response.body.destroy()
        break
      }
    }
    return {
      status: response.statusCode,
      headers: response.headers,
      body: Buffer.concat(chunks).subarray(0, maxBodyBytes).toString('utf8'),
    }
  } catch (error) {
    if (abort.signal.aborted) throw timedOut
    throw error
  } finally {
    clearTimeout(deadline)
  }
}
