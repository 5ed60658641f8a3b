import type { ApplicationService } from '@adonisjs/core/types'
import chainRegistry from '#chains/chain_registry'
import callbackFormats from '#callbacks/callback_format'
import providers from '#payments/payment_provider'
import { NativeCallbackFormat } from '#callbacks/native_callback_format'
import { EvmFamily } from '#plugins/evm/evm_family'
import { TronFamily } from '#plugins/tron/tron_family'
import { SolanaFamily } from '#plugins/solana/solana_family'
import { TonFamily } from '#plugins/ton/ton_family'
import { CompatCallbackFormat } from '#plugins/compat/compat_callback_format'
import { HostedProvider } from '#plugins/provider/hosted_provider'

/**
 * Registers the plugins into the core's registries: chain families,
 * callback formats, the hosted payment provider.
 */
export default class PluginsProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    chainRegistry.register(new EvmFamily())
    chainRegistry.register(new TronFamily())
    chainRegistry.register(new SolanaFamily())
    chainRegistry.register(new TonFamily())

    callbackFormats.register(new NativeCallbackFormat())
    callbackFormats.register(new CompatCallbackFormat())

    providers.register(new HostedProvider())
  }
}
