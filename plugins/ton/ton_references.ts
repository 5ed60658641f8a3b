import { parseTonAddress, rawTonAddress, type TonAddress } from '#plugins/ton/ton_address'
import { TransferLookupError } from '#chains/chain_family'

/**
 * Transaction references a payer or an operator may give for TON:
 * - canonical `ton:<account raw>:<lt>:<hash>`, what block_transaction_id keeps;
 * - `<lt>:<hash>`, a transaction of the order's receiving address;
 * - a bare transaction hash, searched among that address's recent transactions.
 * Hashes are 64 hex characters (base64 as toncenter shows them is accepted too).
 */
export type TonReference =
  | { kind: 'canonical'; account: TonAddress; lt: bigint; hash: string }
  | { kind: 'lt-hash'; lt: bigint; hash: string }
  | { kind: 'hash'; hash: string }

export const TON_REFERENCE_FORMATS =
  'ton:<address>:<lt>:<hash>, <lt>:<hash> or a 64-hex transaction hash'

const HEX_HASH = /^[0-9a-fA-F]{64}$/
const BASE64_HASH = /^[A-Za-z0-9+/_-]{43}=?$/
const LOGICAL_TIME = /^[1-9]\d{0,19}$/

function malformed(reference: string, why: string): TransferLookupError {
  return new TransferLookupError(
    `"${reference}" is not a TON transaction reference (${why}); expected ${TON_REFERENCE_FORMATS}`
  )
}

/** A transaction hash as lower-case hex, or null when the text is not one. */
export function transactionHashHex(text: string): string | null {
  if (HEX_HASH.test(text)) return text.toLowerCase()
  if (BASE64_HASH.test(text)) {
    const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
    if (bytes.length === 32) return bytes.toString('hex')
  }
  return null
}

function logicalTime(reference: string, text: string): bigint {
  if (!LOGICAL_TIME.test(text)) throw malformed(reference, `"${text}" is not a logical time`)
  return BigInt(text)
}

function hashOf(reference: string, text: string): string {
  const hash = transactionHashHex(text)
  if (!hash) throw malformed(reference, `"${text}" is not a transaction hash`)
  return hash
}

function accountOf(reference: string, text: string): TonAddress {
  const parsed = parseTonAddress(text)
  if (parsed) return parsed.address
  throw malformed(reference, `"${text}" is not a TON address`)
}

export function parseTonReference(reference: string): TonReference {
  const text = reference.trim()
  if (text.toLowerCase().startsWith('ton:')) {
    // From the right: the raw address itself contains a colon.
    const parts = text.slice(4).split(':')
    if (parts.length < 3)
      throw malformed(reference, 'the canonical form has an address, a logical time and a hash')
    const hash = hashOf(reference, parts.pop()!)
    const lt = logicalTime(reference, parts.pop()!)
    return { kind: 'canonical', account: accountOf(reference, parts.join(':')), lt, hash }
  }
  const parts = text.split(':')
  if (parts.length === 2)
    return {
      kind: 'lt-hash',
      lt: logicalTime(reference, parts[0]),
      hash: hashOf(reference, parts[1]),
    }
  if (parts.length === 1) return { kind: 'hash', hash: hashOf(reference, parts[0]) }
  throw malformed(reference, 'unexpected form')
}

/** The reference kept as block_transaction_id: `ton:<raw address>:<lt>:<hex hash>`. */
export function canonicalTonReference(account: TonAddress, lt: bigint, hashHex: string): string {
  return `ton:${rawTonAddress(account).toLowerCase()}:${lt}:${hashHex.toLowerCase()}`
}
