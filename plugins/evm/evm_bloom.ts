import { hexToBytes, keccak256, type Hex } from 'viem'

/**
 * A block header's logsBloom (2048 bits, the Ethereum yellow paper's M3:2048):
 * every log's address and each of its topics set three bits, taken from the
 * first three pairs of bytes of their keccak256. A bloom never misses what a
 * block holds; it may say "maybe" for what it does not (more often the
 * busier the block). Used to tell an empty eth_getLogs answer that is true
 * from one a lagging node gave for a block it did not have yet.
 */
const BLOOM_BYTES = 256

function bitsOf(item: Hex): [number, number][] {
  const hash = hexToBytes(keccak256(item))
  const bits: [number, number][] = []
  for (let pair = 0; pair < 6; pair += 2) {
    const bit = ((hash[pair] << 8) | hash[pair + 1]) & 2047
    bits.push([BLOOM_BYTES - 1 - (bit >> 3), 1 << (bit & 7)])
  }
  return bits
}

/** Precomputed bits of the items a scan looks for: checking a header costs a few byte tests. */
export class BloomQuery {
  readonly #contracts: [number, number][][]
  readonly #topic: [number, number][]
  readonly #recipients: [number, number][][]

  /**
   * A block may hold a Transfer (`topic`) of one of `contracts` to one of
   * `recipients` (addresses, as the 32-byte topic the log indexes them by).
   */
  constructor(contracts: Hex[], topic: Hex, recipients: Hex[]) {
    this.#contracts = contracts.map((contract) => bitsOf(contract.toLowerCase() as Hex))
    this.#topic = bitsOf(topic)
    this.#recipients = recipients.map((recipient) => bitsOf(addressTopic(recipient)))
  }

  /** True when the bloom may hold such a log (all three items present); false when it surely does not. */
  mayHold(logsBloom: Hex): boolean {
    const bloom = hexToBytes(logsBloom)
    if (bloom.length !== BLOOM_BYTES) return true // unreadable: assume it may (the caller then asks precisely)
    const has = (bits: [number, number][]) =>
      bits.every(([index, mask]) => (bloom[index] & mask) !== 0)
    return has(this.#topic) && this.#contracts.some(has) && this.#recipients.some(has)
  }
}

/** An address as an indexed event argument: left-padded to 32 bytes. */
export function addressTopic(address: Hex): Hex {
  return `0x${address.slice(2).toLowerCase().padStart(64, '0')}`
}
