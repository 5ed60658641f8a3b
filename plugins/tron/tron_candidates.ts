import { createHash } from 'node:crypto'
import type Token from '#models/token'
import type { UnreadableTransfer } from '#chains/chain_family'
import { tronAddressFromAny } from '#plugins/tron/tron_addresses'
import { fromBaseUnits } from '#support/text/money'
import type {
  TronInternalRow,
  TronTransaction,
  Trc20TransferRow,
} from '#plugins/tron/trongrid_client'

/** One listing: incoming transfers of one token (or TRX) to one watched address. */
export type Stream = { key: string; address: string; token: Token }

/** A listed transfer before its depth is known. */
export type Candidate = {
  txid: string
  to: string
  contract: string | null
  amount: string
  timestamp: number
  /** Known for TRX rows; TRC-20 and internal rows need the receipt. */
  blockNumber: number | null
  success: boolean | null
  /**
   * The transfer's position in its transaction: `value` for a TRX
   * transfer; TRC-20 rows name no log and internal rows no index, the
   * receipt tells (null until read).
   */
  position: string | null
  /**
   * Which transfer of its transaction the row stands for, in the
   * listing's own terms, known before any lookup and the same however
   * often the row is listed: `value`; `trc20:<base units>#<n>` (the n-th
   * row of the transaction to this address of this token and amount,
   * since rows alike are told apart by their order only);
   * `internal:<id>` (the index's id of the internal transaction).
   * It keys the transfer in the cursor before its position is known.
   */
  slot: string
  /** TRC-20 and internal: the amount in base units, to find the transfer in the receipt. */
  baseUnits?: bigint
  /** Among the transaction's rows alike (same recipient, token, amount), which this is: 0 the first. */
  occurrence?: number
  /** Internal rows only (undefined for TRC-20): the index's id of the internal transaction (the receipt's hash), null when it gave none. */
  internalId?: string | null
}

/** What a listed row is to the scanner: a candidate, unreadable (kept, with the reason), or none of its business. */
export type RowReading = { candidate: Candidate } | { unreadable: UnreadableTransfer } | null

const TXID = /^[0-9a-fA-F]{64}$/

function unreadable(
  stream: Stream,
  id: unknown,
  timestamp: unknown,
  reason: string,
  row: unknown
): RowReading {
  // A row without a usable id still gets a stable reference, so that it is
  // recorded once however often it is listed again.
  const reference =
    typeof id === 'string' && TXID.test(id)
      ? id.toLowerCase()
      : `unreadable-${createHash('sha256')
          .update(JSON.stringify(row) ?? '')
          .digest('hex')
          .slice(0, 32)}`
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
  if (row.token_info?.address !== undefined && row.token_info.address !== stream.token.contract)
    return null
  const fault = (reason: string) =>
    unreadable(stream, row.transaction_id, row.block_timestamp, `TRC-20 row ${reason}`, row)
  if (!TXID.test(String(row.transaction_id))) return fault('without a transaction id')
  if (!Number.isSafeInteger(row.block_timestamp)) return fault('without a block time')
  if (typeof row.value !== 'string' || !/^\d+$/.test(row.value))
    return fault('with an unreadable value')
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
      // Which of the transaction's rows alike this is, the listing tells (AlikeCounter).
      slot: `trc20:${row.value}#0`,
      baseUnits: BigInt(row.value),
      occurrence: 0,
    },
  }
}

/**
 * Numbers the rows of one listing that stand for alike transfers (same
 * transaction, recipient, token and amount: an exchange's batch paying
 * the same amount twice): the first is #0, the next #1 … Rows of one
 * transaction share its block time, so every listing that reaches one of
 * them lists them all, and numbers them the same.
 */
export class AlikeCounter {
  readonly #seen = new Map<string, number>()

  number(candidate: Candidate): Candidate {
    if (candidate.baseUnits === undefined) return candidate
    const kind = candidate.internalId === undefined ? 'trc20' : 'internal'
    const key = `${candidate.txid}|${candidate.to}|${candidate.contract ?? 'TRX'}|${kind}|${candidate.baseUnits}`
    const occurrence = this.#seen.get(key) ?? 0
    this.#seen.set(key, occurrence + 1)
    const slot =
      kind === 'trc20'
        ? `trc20:${candidate.baseUnits}#${occurrence}`
        : candidate.internalId
          ? `internal:${candidate.internalId}`
          : `internal:${candidate.baseUnits}#${occurrence}`
    return { ...candidate, occurrence, slot }
  }
}

/** A row of the TRX listing: a transaction, or an internal transaction (search_internal) listed in its own shape. */
export function readTrxRow(row: TronTransaction | TronInternalRow, stream: Stream): RowReading {
  if (isInternalRow(row)) return readInternalRow(row, stream)
  const call = row?.raw_data?.contract?.[0]
  // TRC-20 calls, TRC-10 assets and other contracts also list here.
  if (call?.type !== 'TransferContract') return null
  // A failed transfer moved nothing.
  if (row.ret?.[0]?.contractRet !== 'SUCCESS') return null
  const { to_address: to, amount } = (call.parameter?.value ?? {}) as {
    to_address?: unknown
    amount?: unknown
  }
  const fault = (reason: string) =>
    unreadable(stream, row.txID, row.block_timestamp, `TRX transfer ${reason}`, row)
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
      slot: 'value',
    },
  }
}

function isInternalRow(row: TronTransaction | TronInternalRow): row is TronInternalRow {
  return (
    !!row &&
    typeof row === 'object' &&
    !('raw_data' in row) &&
    ('internal_tx_id' in row || 'tx_id' in row)
  )
}

/**
 * An internal transaction to the watched address: TRX a contract sent.
 * Its value is keyed by asset: "_" is TRX, any other key a TRC-10 id
 * (another asset, not TRX). A rejected one moved nothing. Its block
 * number, success and place in the receipt come from the receipt.
 */
function readInternalRow(row: TronInternalRow, stream: Stream): RowReading {
  const fault = (reason: string) =>
    unreadable(stream, row.tx_id, row.block_timestamp, `internal transaction ${reason}`, row)
  let recipient: string
  try {
    recipient = tronAddressFromAny(String(row.to_address))
  } catch {
    return fault('with an unreadable recipient')
  }
  if (recipient !== stream.address) return null
  if (row.data?.rejected === true) return null
  const sun = trxCallValue(row.data?.call_value)
  if (sun === undefined) return fault('with an unreadable value')
  // Nothing, or only TRC-10 assets: no TRX to this address.
  if (sun === 0n) return null
  if (!TXID.test(String(row.tx_id))) return fault('without a transaction id')
  if (!Number.isSafeInteger(row.block_timestamp)) return fault('without a block time')
  const internalId =
    typeof row.internal_tx_id === 'string' && TXID.test(row.internal_tx_id)
      ? row.internal_tx_id.toLowerCase()
      : null
  return {
    candidate: {
      txid: row.tx_id.toLowerCase(),
      to: stream.address,
      contract: null,
      amount: fromBaseUnits(sun, stream.token.decimals),
      timestamp: row.block_timestamp!,
      blockNumber: null,
      success: null,
      position: null,
      slot: internalId ? `internal:${internalId}` : `internal:${sun}#0`,
      baseUnits: sun,
      occurrence: 0,
      internalId,
    },
  }
}

/** The TRX (sun) of an internal row's call_value: 0 when none or only TRC-10; undefined when unreadable. */
function trxCallValue(value: unknown): bigint | undefined {
  if (value === undefined || value === null) return 0n
  if (typeof value === 'number' || typeof value === 'string')
    return /^\d+$/.test(String(value)) ? BigInt(String(value)) : undefined
  if (typeof value !== 'object' || Array.isArray(value)) return undefined
  const trx = (value as Record<string, unknown>)._
  if (trx === undefined) return 0n
  return /^\d+$/.test(String(trx)) ? BigInt(String(trx)) : undefined
}

/** Timestamp of a listed row, for paging (null when it has none). */
export function rowTime(row: { block_timestamp?: unknown }): number | null {
  return Number.isSafeInteger(row?.block_timestamp) ? (row.block_timestamp as number) : null
}
