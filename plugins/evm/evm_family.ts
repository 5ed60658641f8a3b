import { getAddress, isAddress } from 'viem'
import { InvalidAddressError, type ChainFamily } from '#chains/chain_family'

/** EVM chains (ethereum, bsc, polygon, plasma). */
export class EvmFamily implements ChainFamily {
  readonly name = 'evm'
  readonly addressFormat = '0x followed by 40 hex characters (EIP-55 checksum if mixed-case)'

  normalizeAddress(address: string): string {
    const value = address.trim()
    if (!/^0x[0-9a-fA-F]{40}$/.test(value)) {
      throw new InvalidAddressError(`"${address}" is not an EVM address: expected ${this.addressFormat}`)
    }
    // Mixed case carries an EIP-55 checksum: a wrong one means a typo.
    if (!isAddress(value, { strict: true })) {
      throw new InvalidAddressError(`"${address}" has an invalid EIP-55 checksum (a typo?)`)
    }
    return getAddress(value)
  }

  normalizeContract(contract: string): string {
    return this.normalizeAddress(contract)
  }
}
