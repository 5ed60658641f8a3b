import {
  InvalidAddressError,
  pluginReason,
  type ChainFamily,
  type ChainHead,
  type ObservedTransfer,
  type PaymentUriContext,
  type ScanContext,
  type ScanResult,
  type VerificationContext,
} from '#chains/chain_family'
import { TRON_ADDRESS_PREFIX, base58check } from '#plugins/tron/tron_addresses'
import { scanTron } from '#plugins/tron/tron_scan'
import { verifyTronReference } from '#plugins/tron/tron_verify'
import { tronPaymentUri } from '#plugins/tron/tron_payment_uri'
import { validateTronOptions } from '#plugins/tron/tron_options'
import { tronRequestsPerDay, tronRpcBudget } from '#plugins/tron/tron_budget'
import type Chain from '#models/chain'
import type { RpcBudget, RpcPool } from '#chains/rpc_pool'
import { TronGridClient } from '#plugins/tron/trongrid_client'

/**
 * TRON: base58check addresses starting with T (0x41 + 20 bytes), TRC-20
 * tokens and native TRX, read over plain HTTP from the TronGrid API (the
 * chain's RPC URLs, with TRON-PRO-API-KEY when an API key is set).
 */
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
        `"${address}" is not a TRON address: expected a ${this.addressFormat} with a valid checksum`,
        pluginReason('tron', 'not_an_address', { address })
      )
    }
    if (bytes.length !== 21 || bytes[0] !== TRON_ADDRESS_PREFIX || !value.startsWith('T')) {
      throw new InvalidAddressError(
        `"${address}" is not a TRON mainnet address (must start with T)`,
        pluginReason('tron', 'not_mainnet', { address })
      )
    }
    return value
  }

  normalizeContract(contract: string): string {
    return this.normalizeAddress(contract)
  }

  /** lookbackMinutes, deepScanHours, deepScanEveryMinutes (tron_options.ts). */
  validateOptions(options: Record<string, unknown>) {
    return validateTronOptions(options)
  }

  rpcBudget(url: string, apiKey: string): RpcBudget | null {
    return tronRpcBudget(url, apiKey)
  }

  /** `balanceCheckMinutes`: the balance watch's interval (chains.balance_check_minutes, passed by the core). */
  requestsPerDay(
    chain: Chain,
    addresses: number,
    tokens: number,
    balanceCheckMinutes?: number
  ): number {
    return tronRequestsPerDay(chain, addresses, tokens, balanceCheckMinutes)
  }

  scan(context: ScanContext): Promise<ScanResult> {
    return scanTron(context)
  }

  verifyReference(reference: string, context: VerificationContext): Promise<ObservedTransfer[]> {
    return verifyTronReference(reference, context)
  }

  paymentUri(context: PaymentUriContext): string {
    return tronPaymentUri(context)
  }

  /** The latest block's header (/wallet/getblock without its transactions). */
  async head(rpc: RpcPool): Promise<ChainHead> {
    const block = await new TronGridClient(rpc, rpc.apiKey).nowBlock(false)
    return { kind: 'block', number: String(block.number), time: block.timestamp }
  }
}
