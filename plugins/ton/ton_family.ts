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
import { tonPaymentUri } from '#plugins/ton/ton_payment_uri'
import {
  friendlyTonAddress,
  parseTonAddress,
  type ParsedTonAddress,
} from '#plugins/ton/ton_address'
import { parseTonReference } from '#plugins/ton/ton_references'
import { toncenterBudget, toncenterRequestsPerDay } from '#plugins/ton/ton_budget'
import type { RpcBudget, RpcPool } from '#chains/rpc_pool'
import type Chain from '#models/chain'

/**
 * TON: raw (`0:<64 hex>`) or user-friendly (48 base64 characters) form.
 * Stored in the user-friendly, URL-safe form; receiving wallets use the
 * non-bounceable flavour so that a payment to an undeployed wallet is not
 * bounced back.
 */
export class TonFamily implements ChainFamily {
  readonly name = 'ton'
  readonly addressFormat = 'raw form 0:<64 hex> or user-friendly form (48 characters, EQ…/UQ…)'

  #parse(address: string): ParsedTonAddress {
    const parsed = parseTonAddress(address.trim())
    if (parsed) return parsed
    throw new InvalidAddressError(
      `"${address}" is not a TON address: expected ${this.addressFormat}`,
      pluginReason('ton', 'not_an_address', { address })
    )
  }

  normalizeAddress(address: string): string {
    const { address: parsed, testOnly } = this.#parse(address)
    return friendlyTonAddress(parsed, { bounceable: false, testOnly })
  }

  normalizeContract(contract: string): string {
    const { address: parsed, testOnly } = this.#parse(contract)
    // Contracts (jetton masters) are conventionally shown bounceable.
    return friendlyTonAddress(parsed, { bounceable: true, testOnly })
  }

  /**
   * Confirmed transactions only: toncenter serves transactions of blocks
   * the masterchain has referenced, which are final; there is nothing
   * "seen but not yet deep enough" to report (no `unconfirmed`). Reports
   * the amounts seen and, when due, the balances (ton_balances.ts).
   */
  async scan(context: ScanContext): Promise<ScanResult> {
    const { scanTon } = await import('#plugins/ton/ton_scan')
    return scanTon(context)
  }

  async verifyReference(
    reference: string,
    context: VerificationContext
  ): Promise<ObservedTransfer[]> {
    const { verifyTonReference } = await import('#plugins/ton/ton_verify')
    return verifyTonReference(reference, context, (address) =>
      this.normalizeAddress(address.toRawString())
    )
  }

  rpcBudget(url: string, apiKey: string): RpcBudget {
    return toncenterBudget(url, apiKey)
  }

  requestsPerDay(
    chain: Chain,
    addresses: number,
    tokens: number,
    balanceCheckMinutes?: number
  ): number {
    return toncenterRequestsPerDay(chain, addresses, tokens, balanceCheckMinutes)
  }

  paymentUri(context: PaymentUriContext): string {
    return tonPaymentUri(context)
  }

  /** The last masterchain block's seqno (toncenter's getMasterchainInfo). */
  async head(rpc: RpcPool): Promise<ChainHead> {
    const { ToncenterClient } = await import('#plugins/ton/toncenter_client')
    const seqno = await rpc.call((url) => ToncenterClient.for(rpc, url).masterchainSeqno())
    return { kind: 'seqno', number: String(seqno), time: null }
  }

  /** Explorers (tonviewer, tonscan) find a transaction by its hash alone. */
  explorerReference(reference: string): string {
    try {
      return parseTonReference(reference).hash
    } catch {
      return reference
    }
  }
}
