import chainRegistry from '#chains/chain_registry'
import pluginRegistry from '#app_plugins/plugin_registry'
import { InstallationSeeder } from '#database/installation_seeder'

/**
 * The chains and tokens of the enabled plugins. A chain whose family no
 * enabled plugin brings is skipped (with a line saying so), not an error.
 */
export default class PluginChainsSeeder extends InstallationSeeder {
  async run() {
    const now = Date.now()
    for (const [index, chain] of pluginRegistry.seedChains().entries()) {
      const family = chainRegistry.find(chain.family)
      if (!family) {
        this.print(
          `Skipped the chain ${chain.network}: no enabled plugin brings the family "${chain.family}".`
        )
        continue
      }
      await this.client
        .knexQuery()
        .table('chains')
        .insert({
          network: chain.network,
          family: chain.family,
          display_name: chain.displayName,
          options: JSON.stringify(family.validateOptions?.(chain.options ?? {}) ?? {}),
          enabled: true,
          rpc_urls: JSON.stringify(chain.rpcUrls),
          confirmations: chain.confirmations,
          scan_interval_seconds: chain.scanIntervalSeconds,
          block_time_ms: chain.blockTimeMs,
          explorer_tx_url: chain.explorerTxUrl,
          sort_order: (index + 1) * 10,
          created_at: now,
          updated_at: now,
        })
        .onConflict('network')
        .ignore()

      for (const token of chain.tokens) {
        await this.client
          .knexQuery()
          .table('tokens')
          .insert({
            network: chain.network,
            symbol: token.symbol,
            contract: token.contract === null ? null : family.normalizeContract(token.contract),
            decimals: token.decimals,
            amount_precision: token.amountPrecision,
            enabled: true,
            created_at: now,
            updated_at: now,
          })
          .onConflict(['network', 'symbol'])
          .ignore()
      }
    }
  }
}
