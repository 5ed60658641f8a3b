import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { BlockList, isIP } from 'node:net'

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

export type SafeResponse = { status: number; body: string }

export type SafeRequestOptions = {
  timeoutMs: number
  allowPrivateTargets: boolean
  /** Response bytes kept; the rest is not read. */
  maxBodyBytes?: number
}

/**
 * One HTTP(S) request to a merchant-supplied URL, guarded against server-side
 * request forgery: unless allowed, every address the host name resolves to
 * must be public, and the connection goes to the address that was checked
 * (no second resolution an attacker could change). Redirects are not
 * followed; the whole exchange is bounded by `timeoutMs`.
 */
export function safeRequest(request: SafeRequest, options: SafeRequestOptions): Promise<SafeResponse> {
  return new Promise((resolve, reject) => {
    let url: URL
    try {
      url = new URL(request.url)
    } catch {
      return reject(new ForbiddenTargetError(`"${request.url}" is not a URL`))
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      return reject(new ForbiddenTargetError(`only http and https URLs are called, not ${url.protocol}`))
    }
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (isIP(host) && !options.allowPrivateTargets && isPrivateAddress(host)) {
      return reject(new ForbiddenTargetError(`${host} is a private or loopback address`))
    }

    const guardedLookup = (
      hostname: string,
      lookupOptions: { all?: boolean; family?: number },
      callback: (...args: any[]) => void
    ) => {
      dnsLookup(hostname, { all: true, family: lookupOptions.family ?? 0 }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error)
        if (!options.allowPrivateTargets) {
          const forbidden = addresses.find((entry) => isPrivateAddress(entry.address))
          if (forbidden) {
            return callback(
              new ForbiddenTargetError(`${hostname} resolves to ${forbidden.address}, a private or loopback address`)
            )
          }
        }
        if (lookupOptions.all) return callback(null, addresses)
        callback(null, addresses[0].address, addresses[0].family)
      })
    }

    const maxBodyBytes = options.maxBodyBytes ?? 65_536
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const outgoing = send(url, {
      method: request.method,
      headers: {
        'user-agent': 'crypto-pay-gateway-callback/1',
        ...request.headers,
        ...(request.body !== null ? { 'content-length': String(Buffer.byteLength(request.body)) } : {}),
      },
      lookup: guardedLookup as any,
    })

    const deadline = setTimeout(() => {
      outgoing.destroy(new Error(`timed out after ${Math.round(options.timeoutMs / 1000)} s`))
    }, options.timeoutMs)

    outgoing.once('error', (error) => {
      clearTimeout(deadline)
      reject(error)
    })
    outgoing.once('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        if (size >= maxBodyBytes) return
        chunks.push(chunk)
        size += chunk.length
        if (size >= maxBodyBytes) response.destroy()
      })
      const finish = () => {
        clearTimeout(deadline)
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).subarray(0, maxBodyBytes).toString('utf8'),
        })
      }
      response.once('end', finish)
      response.once('close', finish)
      response.once('error', (error) => {
        clearTimeout(deadline)
        reject(error)
      })
    })
    if (request.body !== null) outgoing.write(request.body)
    outgoing.end()
  })
}
