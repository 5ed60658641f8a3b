import type Token from '#models/token'
import type { ObservedTransfer } from '#chains/chain_family'
import { fromBaseUnits } from '#support/money'
import { tronAddressFromAny, tronAddressFromHex, tronAddressFromWord } from '#plugins/tron/tron_addresses'
import type { TronTransaction, TronTransactionInfo } from '#plugins/tron/trongrid_client'

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
  const observed = (to: string, contract: string | null, baseUnits: bigint, position: string): ObservedTransfer => {
    const token = tokens.find((entry) => entry.contract === contract)
    const decimals = token ? token.decimals : contract === null ? SUN_DECIMALS : 0
    return { ...facts, position, to, contract, amount: fromBaseUnits(baseUnits, decimals), success }
  }

  if (call.type === 'TransferContract') {
    const { to_address: to, amount } = call.parameter.value as { to_address?: string; amount?: number | string }
    if (typeof to !== 'string' || amount === undefined) return []
    return [observed(tronAddressFromAny(to), null, BigInt(amount), 'value')]
  }

  if (call.type !== 'TriggerSmartContract') return []
  if (success) {
    return (info?.log ?? []).flatMap((log, index) =>
      isTransferLog(log)
        ? [observed(tronAddressFromWord(log.topics![2]), tronAddressFromHex(log.address), BigInt(`0x${log.data || '0'}`), `log:${index}`)]
        : []
    )
  }
  const intent = transferIntent(call.parameter.value)
  // A reverted call left no log; it pays nothing (success false) and is named by its call.
  return intent ? [observed(intent.to, intent.contract, intent.amount, 'call')] : []
}

/** An ERC-20 style Transfer event (three topics: the event, from, to). */
export function isTransferLog(log: { topics?: string[] }): boolean {
  return log.topics?.length === 3 && log.topics[0].toLowerCase().replace(/^0x/, '') === TRANSFER_TOPIC
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
  for (let index = 0; index < logs.length; index++) {
    const log = logs[index]
    if (!isTransferLog(log)) continue
    try {
      if (tronAddressFromHex(log.address) !== contract || tronAddressFromWord(log.topics![2]) !== to) continue
      if (BigInt(`0x${log.data || '0'}`) !== baseUnits) continue
    } catch {
      continue
    }
    if (seen++ === occurrence) return `log:${index}`
  }
  return null
}

/** The recipient and amount a TRC-20 transfer / transferFrom call asked for. */
function transferIntent(value: Record<string, unknown>): { to: string; contract: string; amount: bigint } | null {
  const data = String(value.data ?? '').toLowerCase().replace(/^0x/, '')
  const contract = value.contract_address
  if (typeof contract !== 'string') return null
  const words = (from: number, count: number) => {
    const list: string[] = []
    for (let index = 0; index < count; index++) list.push(data.slice(from + index * 64, from + (index + 1) * 64))
    return list.every((word) => /^[0-9a-f]{64}$/.test(word)) ? list : null
  }
  const selector = data.slice(0, 8)
  const args = selector === TRANSFER_SELECTOR ? words(8, 2) : selector === TRANSFER_FROM_SELECTOR ? words(8, 3) : null
  if (!args) return null
  const [to, amount] = selector === TRANSFER_SELECTOR ? args : args.slice(1)
  return { to: tronAddressFromWord(to), contract: tronAddressFromAny(contract), amount: BigInt(`0x${amount}`) }
}
