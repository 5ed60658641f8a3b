import chainRegistry from '#chains/chain_registry'
import pluginRegistry from '#plugin_host/plugin_registry'
import { InstallationSeeder } from '#database/installation_seeder'

/**
 * The chains and tokens of the enabled plugins. A chain whose family no
 * enabled plugin brings is skipped (with a line saying so), not an error.
 * Rows are only ever added, never changed: a chain missing from an
 * installation (one made before its plugin seeded it) is added after the
 * chains it has. A default token missing from a chain the installation
 * had already (the operator's, perhaps: one added by hand under the same
 * name) is added disabled, so that what that chain offers payers stays as
 * the operator set it; none is added to a chain of another family.
 * Starting processes seed one at a time (InstallationService.installDefaults).
 */
export default class PluginChainsSeeder extends InstallationSeeder {
  async run() {
    const now = Date.now()
    for (const chain of pluginRegistry.seedChains()) {
      const family = chainRegistry.find(chain.family)
      if (!family) {
        this.print(
          `Skipped the chain ${chain.network}: no enabled plugin brings the family "${chain.family}".`
        )
        continue
      }
      const existing: { family: string } | null = await this.client
        .from('chains')
        .where('network', chain.network)
        .select('family')
        .first()
      if (existing && existing.family !== chain.family) {
        this.print(
          `Left the chain ${chain.network} as it is: its family is "${existing.family}", not "${chain.family}"; its default tokens were not added.`
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
          enabled: chain.enabled ?? true,
          rpc_urls: JSON.stringify(chain.rpcUrls),
          confirmations: chain.confirmations,
          scan_interval_seconds: chain.scanIntervalSeconds,
          block_time_ms: chain.blockTimeMs,
          explorer_tx_url: chain.explorerTxUrl,
          // Last of the list, in one statement (several processes may seed at once).
          sort_order: this.client.knexRawQuery(
            '(SELECT COALESCE(MAX(sort_order), 0) + 10 FROM chains)'
          ),
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
            enabled: !existing,
            created_at: now,
            updated_at: now,
          })
          .onConflict(['network', 'symbol'])
          .ignore()
      }
    }
  }
}
