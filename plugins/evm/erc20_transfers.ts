import { getAddress, parseAbiItem, type Log } from 'viem'
import type Token from '#models/token'

/** The ERC-20 Transfer event (topic0 ddf252ad…). */
export const TRANSFER_EVENT = parseAbiItem(
  'event Transfer(address indexed from, address indexed to, uint256 value)'
)

export type TransferLog = Log<bigint, number, false, typeof TRANSFER_EVENT, true>

/** The token of a log, by contract (stored contracts are EIP-55). */
export function tokenOfContract(tokens: Token[], contract: string): Token | undefined {
  const normalized = getAddress(contract)
  return tokens.find((token) => token.contract === normalized)
}
