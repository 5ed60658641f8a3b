import { BlockList, isIP } from 'node:net'

/**
 * An API key's allow-list of client addresses: single IPs and CIDR ranges,
 * IPv4 and IPv6. Operators write it as a list separated by commas, spaces
 * or new lines; it is stored comma-separated (empty = any address).
 * The operators' checks and the merchant request check read entries here,
 * so an entry accepted when saved is one the request check understands.
 */
export type AllowListEntry = { address: string; prefix: number | null; type: 'ipv4' | 'ipv6' }

/** More entries than this is a list pasted by mistake, not an allow-list. */
export const MAX_ALLOWLIST_ENTRIES = 100

/** The entries of a list as written: split on commas and white space, empty ones dropped. */
export function splitAllowList(text: string): string[] {
  return text.split(/[\s,]+/).filter((entry) => entry !== '')
}

/** One entry: an IP address or `address/prefix`; null when it is neither (zone ids included). */
export function parseAllowListEntry(entry: string): AllowListEntry | null {
  const match = /^([0-9A-Fa-f:.]+)(?:\/(\d{1,3}))?$/.exec(entry)
  if (!match) return null
  const family = isIP(match[1])
  if (family === 0) return null
  const type = family === 6 ? 'ipv6' : 'ipv4'
  if (match[2] === undefined) return { address: match[1], prefix: null, type }
  const prefix = Number(match[2])
  if (prefix > (family === 6 ? 128 : 32)) return null
  return { address: match[1], prefix, type }
}

/** Whether `ip` (as the socket gives it) is in the list; an empty list allows every address. */
export function allowListIncludes(entries: readonly string[], ip: string): boolean {
  if (entries.length === 0) return true
  // IPv4 clients of a dual-stack socket appear as ::ffff:a.b.c.d
  const clientIp = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip
  const family = isIP(clientIp)
  if (family === 0) return false
  const list = new BlockList()
  for (const text of entries) {
    const entry = parseAllowListEntry(text)
    if (!entry) continue
    if (entry.prefix === null) list.addAddress(entry.address, entry.type)
    else list.addSubnet(entry.address, entry.prefix, entry.type)
  }
  return list.check(clientIp, family === 6 ? 'ipv6' : 'ipv4')
}
