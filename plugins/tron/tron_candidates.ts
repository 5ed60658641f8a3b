import { createHash } from 'node:crypto'
import type Token from '#models/token'
import type { UnreadableTransfer } from '#chains/chain_family'
import { tronAddressFromAny } from '#plugins/tron/tron_addresses'
import { fromBaseUnits } from '#support/money'
import type { TronTransaction, Trc20TransferRow } from '#plugins/tron/trongrid_client'

/** One listing: incoming transfers of one token (or TRX) to one watched address. */
export type Stream = { key: string; address: string; token: Token }

/** A listed transfer before its depth is known. */
export type Candidate = {
  txid: string
  to: string
  contract: string | null
  amount: string
  timestamp: number
  /** Known for TRX rows; TRC-20 rows need the receipt. */
  blockNumber: number | null
  success: boolean | null
  /** The transfer's position in its transaction: `value` for TRX; TRC-20 rows name no log, the receipt's logs tell (null until read). */
  position: string | null
  /** TRC-20: the amount in base units, to find its log in the receipt. */
  baseUnits?: bigint
}

/** What a listed row is to the scanner: a candidate, unreadable (kept, with the reason), or none of its business. */
export type RowReading = { candidate: Candidate } | { unreadable: UnreadableTransfer } | null

const TXID = /^[0-9a-fA-F]{64}$/

function unreadable(stream: Stream, id: unknown, timestamp: unknown, reason: string, row: unknown): RowReading {
  // A row without a usable id still gets a stable reference, so that it is
  // recorded once however often it is listed again.
  const reference =
    typeof id === 'string' && TXID.test(id)
      ? id.toLowerCase()
      : `unreadable-${createHash('sha256').update(JSON.stringify(row) ?? '').digest('hex').slice(0, 32)}`
  return {
    unreadable: {
      reference,
      to: stream.address,
      contract: stream.token.contract,
      timestamp: Number.isSafeInteger(timestamp) ? (timestamp as number) : 0,
      reason: `${reason}: ${JSON.stringify(row)?.slice(0, 300)}`,
    },
  }
}

export function readTrc20Row(row: Trc20TransferRow, stream: Stream): RowReading {
  // only_to and contract_address already filter; checked again so that a
  // misbehaving index never credits another token or address.
  if (row?.type !== 'Transfer' || row.to !== stream.address) return null
  if (row.token_info?.address !== undefined && row.token_info.address !== stream.token.contract) return null
  const fault = (reason: string) => unreadable(stream, row.transaction_id, row.block_timestamp, `TRC-20 row ${reason}`, row)
  if (!TXID.test(String(row.transaction_id))) return fault('without a transaction id')
  if (!Number.isSafeInteger(row.block_timestamp)) return fault('without a block time')
  if (typeof row.value !== 'string' || !/^\d+$/.test(row.value)) return fault('with an unreadable value')
  return {
    candidate: {
      txid: row.transaction_id.toLowerCase(),
      to: stream.address,
      contract: stream.token.contract,
      amount: fromBaseUnits(row.value, stream.token.decimals),
      timestamp: row.block_timestamp,
      blockNumber: null,
      success: null,
      position: null,
      baseUnits: BigInt(row.value),
    },
  }
}

export function readTrxRow(row: TronTransaction, stream: Stream): RowReading {
  const call = row?.raw_data?.contract?.[0]
  // TRC-20 calls, TRC-10 assets and other contracts also list here.
  if (call?.type !== 'TransferContract') return null
  // A failed transfer moved nothing.
  if (row.ret?.[0]?.contractRet !== 'SUCCESS') return null
  const { to_address: to, amount } = (call.parameter?.value ?? {}) as { to_address?: unknown; amount?: unknown }
  const fault = (reason: string) => unreadable(stream, row.txID, row.block_timestamp, `TRX transfer ${reason}`, row)
  let recipient: string
  try {
    recipient = tronAddressFromAny(String(to))
  } catch {
    return fault('with an unreadable recipient')
  }
  if (recipient !== stream.address) return null
  if (!TXID.test(String(row.txID))) return fault('without a transaction id')
  if (!Number.isSafeInteger(row.block_timestamp)) return fault('without a block time')
  if (!/^\d+$/.test(String(amount))) return fault('with an unreadable amount')
  return {
    candidate: {
      txid: row.txID.toLowerCase(),
      to: stream.address,
      contract: null,
      amount: fromBaseUnits(String(amount), stream.token.decimals),
      timestamp: row.block_timestamp!,
      blockNumber: Number.isSafeInteger(row.blockNumber) ? row.blockNumber! : null,
      success: true,
      position: 'value',
    },
  }
}

/** Timestamp of a listed row, for paging (null when it has none). */
export function rowTime(row: { block_timestamp?: unknown }): number | null {
  return Number.isSafeInteger(row?.block_timestamp) ? (row.block_timestamp as number) : null
}
