import type { ApplicationService } from '@adonisjs/core/types'
import chainRegistry from '#chains/chain_registry'
import { EvmFamily } from '#plugins/evm/evm_family'
import { TronFamily } from '#plugins/tron/tron_family'
import { SolanaFamily } from '#plugins/solana/solana_family'
import { TonFamily } from '#plugins/ton/ton_family'

/**
 * Registers the plugins (chain families today; provider and callback
 * formats with the order lifecycle) into the core's registries.
 */
export default class PluginsProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    chainRegistry.register(new EvmFamily())
    chainRegistry.register(new TronFamily())
    chainRegistry.register(new SolanaFamily())
    chainRegistry.register(new TonFamily())
  }
}
