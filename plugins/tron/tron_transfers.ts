import type Token from '#models/token'
import type { ObservedTransfer } from '#chains/chain_family'
import { fromBaseUnits } from '#support/text/money'
import {
  tronAddressFromAny,
  tronAddressFromHex,
  tronAddressFromWord,
} from '#plugins/tron/tron_addresses'
import type {
  TronInternalTransaction,
  TronTransaction,
  TronTransactionInfo,
} from '#plugins/tron/trongrid_client'

/** keccak256("Transfer(address,address,uint256)"), as TRON logs carry it (no 0x). */
export const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'
/** transfer(address,uint256) and transferFrom(address,address,uint256) selectors. */
const TRANSFER_SELECTOR = 'a9059cbb'
const TRANSFER_FROM_SELECTOR = '23b872dd'
/** TRX has 6 decimals (1 TRX = 1,000,000 sun). */
export const SUN_DECIMALS = 6

/** Facts about the transaction's block, decided by the caller. */
export type BlockFacts = { reference: string; timestamp: number; confirmations: number }

/**
 * Whether the transaction did what it asked: `ret[0].contractRet` is
 * SUCCESS, and for contract calls the receipt says SUCCESS too (a reverted
 * call is still in a block and still costs fees).
 */
export function succeeded(transaction: TronTransaction, info: TronTransactionInfo | null): boolean {
  const contractRet = transaction.ret?.[0]?.contractRet
  if (contractRet !== undefined && contractRet !== 'SUCCESS') return false
  if (info?.result === 'FAILED') return false
  const receipt = info?.receipt?.result
  if (receipt !== undefined && receipt !== 'SUCCESS') return false
  return contractRet === 'SUCCESS' || receipt === 'SUCCESS'
}

/**
 * The transfers one transaction made: a TransferContract moves TRX; a
 * TriggerSmartContract moves TRC-20 tokens, read from its Transfer logs
 * when it succeeded, and from its call data (transfer / transferFrom) when
 * it failed — a reverted call leaves no log, yet the payer must hear "it
 * failed", not "it transfers nothing". Tokens the network does not know
 * are reported in base units (their decimals are unknown); the core only
 * compares amounts of the order's own token.
 */
export function transfersOf(
  transaction: TronTransaction,
  info: TronTransactionInfo | null,
  tokens: Token[],
  facts: BlockFacts
): ObservedTransfer[] {
  const call = transaction.raw_data.contract[0]
  if (!call) return []
  const success = succeeded(transaction, info)
  const observed = (
    to: string,
    contract: string | null,
    baseUnits: bigint,
    position: string
  ): ObservedTransfer => {
    const token = tokens.find((entry) => entry.contract === contract)
    const decimals = token ? token.decimals : contract === null ? SUN_DECIMALS : 0
    return { ...facts, position, to, contract, amount: fromBaseUnits(baseUnits, decimals), success }
  }

  if (call.type === 'TransferContract') {
    const { to_address: to, amount } = call.parameter.value as {
      to_address?: string
      amount?: number | string
    }
    if (typeof to !== 'string' || amount === undefined) return []
    return [observed(tronAddressFromAny(to), null, BigInt(amount), 'value')]
  }

  // TRX a contract sent during the call (or during its creation), named by
  // its place in the receipt; a rejected one, or any of a failed call, moved nothing.
  const internal = trxInternalTransfers(info).map((entry) => ({
    ...observed(entry.to, null, entry.sun, `internal:${entry.index}`),
    success: success && !entry.rejected,
  }))
  if (call.type !== 'TriggerSmartContract') return internal
  if (success) {
    const logs = (info?.log ?? []).flatMap((log, index) =>
      isTransferLog(log)
        ? [
            observed(
              tronAddressFromWord(log.topics![2]),
              tronAddressFromHex(log.address),
              BigInt(`0x${log.data || '0'}`),
              `log:${index}`
            ),
          ]
        : []
    )
    return [...logs, ...internal]
  }
  const intent = transferIntent(call.parameter.value)
  // A reverted call left no log; it pays nothing (success false) and is named by its call.
  return [
    ...(intent ? [observed(intent.to, intent.contract, intent.amount, 'call')] : []),
    ...internal,
  ]
}

/** A TRX internal transfer of a receipt: its index in `internal_transactions`, recipient, sun, and whether it was rejected. */
export type InternalTrxTransfer = {
  index: number
  hash: string | null
  to: string
  sun: bigint
  rejected: boolean
}

/**
 * The TRX internal transactions of a receipt: the ones that carry TRX
 * (callValueInfo entries without a tokenId; a TRC-10 entry is another
 * asset, not TRX) and send some. Entries that cannot be read are left
 * out (they cannot be tied to a recipient or an amount).
 */
export function trxInternalTransfers(info: TronTransactionInfo | null): InternalTrxTransfer[] {
  const list = info?.internal_transactions
  if (!Array.isArray(list)) return []
  return list.flatMap((entry, index) => {
    const sun = trxOf(entry)
    if (sun === null || sun === 0n) return []
    let to: string
    try {
      to = tronAddressFromAny(String(entry.transferTo_address))
    } catch {
      return []
    }
    const hash =
      typeof entry.hash === 'string' && /^[0-9a-fA-F]{64}$/.test(entry.hash)
        ? entry.hash.toLowerCase()
        : null
    return [{ index, hash, to, sun, rejected: entry.rejected === true }]
  })
}

function trxOf(entry: TronInternalTransaction): bigint | null {
  if (!Array.isArray(entry?.callValueInfo)) return null
  let sun = 0n
  for (const value of entry.callValueInfo) {
    if (value?.tokenId !== undefined && value.tokenId !== '' && value.tokenId !== '_') continue
    if (value?.callValue === undefined) continue
    if (!/^\d+$/.test(String(value.callValue))) return null
    sun += BigInt(String(value.callValue))
  }
  return sun
}

/**
 * The position (`internal:<index>`) of a listed internal transfer in its
 * receipt: by the internal transaction's hash when the listing names it
 * and the receipt has it, else the `occurrence`-th TRX internal transfer
 * to `to` of `sun` (0: the first); null
 * when the receipt has no such transfer.
 */
export function internalPosition(
  info: TronTransactionInfo,
  to: string,
  sun: bigint,
  hash: string | null,
  occurrence = 0
): { position: string; rejected: boolean } | null {
  const alike = trxInternalTransfers(info).filter((entry) => entry.to === to && entry.sun === sun)
  // The index's id is the receipt's hash; should it ever not be, the order of alike transfers still tells them apart.
  const found = (hash ? alike.find((entry) => entry.hash === hash) : undefined) ?? alike[occurrence]
  return found ? { position: `internal:${found.index}`, rejected: found.rejected } : null
}

/** An ERC-20 style Transfer event (three topics: the event, from, to). */
export function isTransferLog(log: { topics?: string[] }): boolean {
  return (
    log.topics?.length === 3 && log.topics[0].toLowerCase().replace(/^0x/, '') === TRANSFER_TOPIC
  )
}

/**
 * The position (`log:<index>`) of the Transfer log of `contract` to `to`
 * of `baseUnits` in a receipt: how a TRC-20 listing row, which names no
 * log, is tied to its transfer. The `occurrence`-th such log (0: the
 * first) when one transaction holds several alike; null when none.
 */
export function transferLogPosition(
  info: TronTransactionInfo,
  contract: string,
  to: string,
  baseUnits: bigint,
  occurrence = 0
): string | null {
  let seen = 0
  const logs = info.log ?? []
  for (const [index, log] of logs.entries()) {
    if (!isTransferLog(log)) continue
    try {
      if (
        tronAddressFromHex(log.address) !== contract ||
        tronAddressFromWord(log.topics![2]) !== to
      )
        continue
      if (BigInt(`0x${log.data || '0'}`) !== baseUnits) continue
    } catch {
      continue
    }
    if (seen++ === occurrence) return `log:${index}`
  }
  return null
}

/** The recipient and amount a TRC-20 transfer / transferFrom call asked for. */
function transferIntent(
  value: Record<string, unknown>
): { to: string; contract: string; amount: bigint } | null {
  const data = String(value.data ?? '')
    .toLowerCase()
    .replace(/^0x/, '')
  const contract = value.contract_address
  if (typeof contract !== 'string') return null
  const words = (from: number, count: number) => {
    const list: string[] = []
    for (let index = 0; index < count; index++)
      list.push(data.slice(from + index * 64, from + (index + 1) * 64))
    return list.every((word) => /^[0-9a-f]{64}$/.test(word)) ? list : null
  }
  const selector = data.slice(0, 8)
  const args =
    selector === TRANSFER_SELECTOR
      ? words(8, 2)
      : selector === TRANSFER_FROM_SELECTOR
        ? words(8, 3)
        : null
  if (!args) return null
  const [to, amount] = selector === TRANSFER_SELECTOR ? args : args.slice(1)
  return {
    to: tronAddressFromWord(to),
    contract: tronAddressFromAny(contract),
    amount: BigInt(`0x${amount}`),
  }
}
