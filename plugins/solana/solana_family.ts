import { isAddress } from '@solana/kit'
import { InvalidAddressError, type ChainFamily } from '#chains/chain_family'

/** Solana: base58 encoding of a 32-byte public key. */
export class SolanaFamily implements ChainFamily {
  readonly name = 'solana'
  readonly addressFormat = 'base58 public key of 32 bytes (32–44 characters)'

  normalizeAddress(address: string): string {
    const value = address.trim()
    if (!isAddress(value)) {
      throw new InvalidAddressError(`"${address}" is not a Solana address: expected a ${this.addressFormat}`)
    }
    return value
  }

  normalizeContract(contract: string): string {
    return this.normalizeAddress(contract)
  }
}
