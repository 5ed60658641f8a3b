import { checksumEvmAddress, isEvmAddress } from '#plugins/evm/evm_address'
import {
  InvalidAddressError,
  pluginReason,
  type ChainFamily,
  type ChainHead,
  type EndpointMismatch,
  type NetworkOptionField,
  type HeadHandlers,
  type HeadWatch,
  type ObservedTransfer,
  type PaymentUriContext,
  type ScanContext,
  type ScanResult,
  type VerificationContext,
} from '#chains/chain_family'
import { evmOptions, validateEvmOptions } from '#plugins/evm/evm_options'
import { toBaseUnits } from '#support/text/money'
import type Chain from '#models/chain'
import type { RpcBudget } from '#chains/rpc_pool'
import { evmRequestsPerDay, evmRpcBudget } from '#plugins/evm/evm_budget'
import type { RpcPool } from '#chains/rpc_pool'

/**
 * EVM chains (ethereum, bsc, polygon, plasma, the L2s …). The scanner, the head watch
 * and the reference checks load viem (about 30 MB resident) on first use: a
 * web process that never scans holds only the address checks.
 */
export class EvmFamily implements ChainFamily {
  readonly name = 'evm'
  readonly addressFormat = '0x followed by 40 hex characters (EIP-55 checksum if mixed-case)'

  normalizeAddress(address: string): string {
    const value = address.trim()
    if (!/^0x[0-9a-fA-F]{40}$/.test(value)) {
      throw new InvalidAddressError(
        `"${address}" is not an EVM address: expected ${this.addressFormat}`,
        pluginReason('evm', 'not_an_address', { address })
      )
    }
    // Mixed case carries an EIP-55 checksum: a wrong one means a typo.
    if (!isEvmAddress(value)) {
      throw new InvalidAddressError(
        `"${address}" has an invalid EIP-55 checksum (a typo?)`,
        pluginReason('evm', 'bad_checksum', { address })
      )
    }
    return checksumEvmAddress(value)
  }

  /** chainId (payment URIs) and blockRange (blocks per log query). */
  validateOptions(options: Record<string, unknown>) {
    return validateEvmOptions(options)
  }

  normalizeContract(contract: string): string {
    return this.normalizeAddress(contract)
  }

  async scan(context: ScanContext): Promise<ScanResult> {
    const { scanEvm } = await import('#plugins/evm/evm_scan')
    return scanEvm(context)
  }

  /** New heads over the chain's WebSocket endpoint (eth_subscribe newHeads): each triggers a scan. */
  async watchHeads(chain: Chain, handlers: HeadHandlers): Promise<HeadWatch> {
    const { watchEvmHeads } = await import('#plugins/evm/evm_heads')
    return watchEvmHeads(chain, handlers)
  }

  /** The provider's free tier by host (evm_budget.ts); EVM keys ride in the URL. */
  rpcBudget(url: string): RpcBudget | null {
    return evmRpcBudget(url)
  }

  requestsPerDay(
    chain: Chain,
    addresses: number,
    tokens: number,
    balanceCheckMinutes?: number
  ): number {
    return evmRequestsPerDay(chain, addresses, tokens, balanceCheckMinutes)
  }

  async verifyReference(
    reference: string,
    context: VerificationContext
  ): Promise<ObservedTransfer[]> {
    const { verifyEvmReference } = await import('#plugins/evm/evm_verify')
    return verifyEvmReference(reference, context)
  }

  /** A network's EIP-155 chain id: payment URIs carry it, and a connection test compares it. */
  readonly networkOptions: readonly NetworkOptionField[] = [
    {
      name: 'chainId',
      label: 'Chain id',
      help: 'The EIP-155 chain id (Arbitrum One 42161, Base 8453 …): the RPC endpoint must serve it (eth_chainId).',
      numeric: true,
    },
  ]

  /**
   * eth_chainId against the chainId option: an endpoint of another chain
   * answers heads too, and a wallet given the wrong chain id in its
   * payment URI would pay on another chain.
   */
  async checkEndpoint(rpc: RpcPool, chain: Chain): Promise<EndpointMismatch | null> {
    const { chainId } = evmOptions(chain)
    if (chainId === undefined) return null
    const { evmCall } = await import('#plugins/evm/evm_client')
    const served = await evmCall(rpc)((client) => client.getChainId())
    if (served === chainId) return null
    return {
      option: 'chainId',
      message: `the endpoint serves chain id ${served}, not ${chainId}`,
    }
  }

  /** The latest block's header: one eth_getBlockByNumber. */
  async head(rpc: RpcPool): Promise<ChainHead> {
    const { evmCall } = await import('#plugins/evm/evm_client')
    const block = await evmCall(rpc)((client) => client.getBlock({ blockTag: 'latest' }))
    return { kind: 'block', number: block.number.toString(), time: Number(block.timestamp) * 1000 }
  }

  /**
   * EIP-681: `ethereum:<to>@<chainId>?value=<wei>` for the native coin,
   * `ethereum:<token>@<chainId>/transfer?address=<to>&uint256=<base units>`
   * for a token. Wallets use the chain id to pick the network.
   */
  paymentUri({ chain, token, order }: PaymentUriContext): string {
    const { chainId } = evmOptions(chain)
    const at = chainId !== undefined ? `@${chainId}` : ''
    const units = toBaseUnits(order.actualAmount, token.decimals).toString()
    if (token.contract === null) return `ethereum:${order.receiveAddress}${at}?value=${units}`
    return `ethereum:${token.contract}${at}/transfer?address=${order.receiveAddress}&uint256=${units}`
  }
}
