import { createBase58check } from '@scure/base'
import { sha256 } from '@noble/hashes/sha2'
import { InvalidAddressError, type ChainFamily } from '#chains/chain_family'

const base58check = createBase58check(sha256)
const TRON_PREFIX = 0x41

/** TRON: base58check addresses starting with T (0x41 + 20 bytes). */
export class TronFamily implements ChainFamily {
  readonly name = 'tron'
  readonly addressFormat = 'base58 address starting with T (34 characters)'

  normalizeAddress(address: string): string {
    const value = address.trim()
    let bytes: Uint8Array
    try {
      bytes = base58check.decode(value)
    } catch {
      throw new InvalidAddressError(
        `"${address}" is not a TRON address: expected a ${this.addressFormat} with a valid checksum`
      )
    }
    if (bytes.length !== 21 || bytes[0] !== TRON_PREFIX || !value.startsWith('T')) {
      throw new InvalidAddressError(`"${address}" is not a TRON mainnet address (must start with T)`)
    }
    return value
  }

  normalizeContract(contract: string): string {
    return this.normalizeAddress(contract)
  }
}
