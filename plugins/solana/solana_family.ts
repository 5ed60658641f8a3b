import { isAddress } from '@solana/addresses'
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
import type { ScanLimits } from '#plugins/solana/solana_scan'
import { solanaPayUri } from '#plugins/solana/solana_payment_uri'
import { solanaRequestsPerDay, solanaRpcBudget } from '#plugins/solana/solana_budget'
import type Chain from '#models/chain'
import type { RpcBudget, RpcPool } from '#chains/rpc_pool'

/**
 * Solana: base58 encoding of a 32-byte public key. Watches each wallet for
 * SOL and its token accounts for SPL tokens, the associated ones and the
 * others it owns (see solana_scan), reads their balances for the balance
 * watch (solana_balances), verifies transaction signatures, and builds
 * Solana Pay URIs.
 */
export class SolanaFamily implements ChainFamily {
  readonly name = 'solana'
  readonly addressFormat = 'base58 public key of 32 bytes (32–44 characters)'

  /** Scan limits for tests; the scanner's defaults otherwise. */
  constructor(private readonly limits?: ScanLimits) {}

  normalizeAddress(address: string): string {
    const value = address.trim()
    if (!isAddress(value)) {
      throw new InvalidAddressError(
        `"${address}" is not a Solana address: expected a ${this.addressFormat}`,
        pluginReason('solana', 'not_an_address', { address })
      )
    }
    return value
  }

  normalizeContract(contract: string): string {
    return this.normalizeAddress(contract)
  }

  async scan(context: ScanContext): Promise<ScanResult> {
    const [{ scanSolana, DEFAULT_SCAN_LIMITS }, { SolanaRpc }] = await Promise.all([
      import('#plugins/solana/solana_scan'),
      import('#plugins/solana/solana_rpc'),
    ])
    return scanSolana(context, new SolanaRpc(context.rpc), this.limits ?? DEFAULT_SCAN_LIMITS)
  }

  async verifyReference(
    reference: string,
    context: VerificationContext
  ): Promise<ObservedTransfer[]> {
    const [{ verifySolanaReference }, { SolanaRpc }] = await Promise.all([
      import('#plugins/solana/solana_verification'),
      import('#plugins/solana/solana_rpc'),
    ])
    return verifySolanaReference(reference, context, new SolanaRpc(context.rpc))
  }

  rpcBudget(url: string): RpcBudget | null {
    return solanaRpcBudget(url)
  }

  requestsPerDay(
    chain: Chain,
    addresses: number,
    tokens: number,
    balanceCheckMinutes?: number
  ): number {
    return solanaRequestsPerDay(chain, addresses, tokens, balanceCheckMinutes)
  }

  paymentUri(context: PaymentUriContext): string {
    return solanaPayUri(context)
  }

  /** The latest confirmed slot (getSlot). */
  async head(rpc: RpcPool): Promise<ChainHead> {
    const { SolanaRpc } = await import('#plugins/solana/solana_rpc')
    const slot = await new SolanaRpc(rpc).slot('confirmed')
    return { kind: 'slot', number: slot.toString(), time: null }
  }
}
