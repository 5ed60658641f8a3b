import { createBase58check, hex } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2'

/**
 * TRON addresses: 21 bytes, the 0x41 prefix then the 20-byte account id
 * (the same id an EVM address has). Wallets and TronGrid's v1 rows use the
 * base58check "T…" form; the node's raw JSON uses 41-prefixed hex; logs and
 * ABI words carry the bare 20 bytes. The gateway stores base58 only.
 */
export const base58check = createBase58check(sha256)
export const TRON_ADDRESS_PREFIX = 0x41

/** The 21 bytes of a base58check T-address, or null when it is not one. */
export function decodeTronAddress(address: string): Uint8Array | null {
  let bytes: Uint8Array
  try {
    bytes = base58check.decode(address)
  } catch {
    return null
  }
  if (bytes.length !== 21 || bytes[0] !== TRON_ADDRESS_PREFIX || !address.startsWith('T'))
    return null
  return bytes
}

/**
 * Base58 form of a hex address: "41" + 40 hex (node JSON), "0x" + 40 hex,
 * or 40 bare hex (log addresses). Throws on anything else.
 */
export function tronAddressFromHex(value: string): string {
  const text = value.toLowerCase().replace(/^0x/, '')
  let body: string
  if (/^41[0-9a-f]{40}$/.test(text)) body = text.slice(2)
  else if (/^[0-9a-f]{40}$/.test(text)) body = text
  else throw new Error(`"${value}" is not a hex TRON address`)
  const bytes = new Uint8Array(21)
  bytes[0] = TRON_ADDRESS_PREFIX
  bytes.set(hex.decode(body), 1)
  return base58check.encode(bytes)
}

/** An address as found in node JSON (hex) or v1 rows (base58), in base58. */
export function tronAddressFromAny(value: string): string {
  return value.startsWith('T') ? value : tronAddressFromHex(value)
}

/** The address held in a 32-byte ABI word or log topic (its last 20 bytes). */
export function tronAddressFromWord(word: string): string {
  const text = word.toLowerCase().replace(/^0x/, '')
  if (!/^[0-9a-f]{64}$/.test(text)) throw new Error(`"${word}" is not a 32-byte word`)
  return tronAddressFromHex(text.slice(24))
}

/** 41-prefixed lower-case hex of a base58 T-address. */
export function tronAddressToHex(address: string): string {
  const bytes = decodeTronAddress(address)
  if (!bytes) throw new Error(`"${address}" is not a TRON address`)
  return hex.encode(bytes)
}
