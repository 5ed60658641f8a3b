import { keccak_256 } from '@noble/hashes/sha3'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'

/**
 * EIP-55 for the address checks a web process makes (wallets, contracts,
 * order targets) without loading viem, which only the scanners and the
 * reference checks need: each hex letter is upper-case when the matching
 * nibble of keccak-256(lower-case hex) is 8 or more.
 */
export function checksumEvmAddress(address: string): string {
  const hex = address.slice(2).toLowerCase()
  const hash = bytesToHex(keccak_256(utf8ToBytes(hex)))
  let out = '0x'
  for (const [index, char] of [...hex].entries()) {
    out += Number.parseInt(hash[index], 16) >= 8 ? char.toUpperCase() : char
  }
  return out
}

/**
 * `0x` and 40 hex digits; all lower-case carries no checksum, any upper-case
 * letter means the EIP-55 checksum must match (viem's `isAddress` strict).
 */
export function isEvmAddress(address: string): boolean {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return false
  if (address.toLowerCase() === address) return true
  return checksumEvmAddress(address) === address
}
