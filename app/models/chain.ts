import { column } from '@adonisjs/lucid/orm'
import { TimestampedRecord } from '#models/base_record'
import { booleanColumn, integerColumn } from '#models/columns'
import { SecretPurpose, revealSecret, sealSecret } from '#support/crypto/secret_box'

/** A network the gateway can watch, of a family some plugin brings. */
export default class Chain extends TimestampedRecord {
  static table = 'chains'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare network: string

  /** Chain family: the plugin that understands this network. */
  @column()
  declare family: string

  @column()
  declare displayName: string

  /**
   * Family-specific settings (a chain id, a block range ...), as
   * validated by the family (ChainFamily.validateOptions).
   */
  @column({
    prepare: (value: Record<string, unknown>) => JSON.stringify(value ?? {}),
    consume: (value: string | null) =>
      value ? (JSON.parse(value) as Record<string, unknown>) : {},
  })
  declare options: Record<string, unknown>

  @booleanColumn()
  declare enabled: boolean

  @column({
    prepare: (value: string[]) => JSON.stringify(value),
    consume: (value: string) => (value ? (JSON.parse(value) as string[]) : []),
  })
  declare rpcUrls: string[]

  /**
   * WebSocket endpoint whose head notifications trigger scans (the family's
   * watchHeads hook); null: polled at the scan interval. May carry a key:
   * shown masked (redactUrl) wherever it is shown.
   */
  @column({ serializeAs: null })
  declare wsUrl: string | null

  @integerColumn()
  declare confirmations: number

  @integerColumn()
  declare scanIntervalSeconds: number

  /** Typical time between two blocks, in milliseconds. */
  @integerColumn()
  declare blockTimeMs: number

  @integerColumn()
  declare sortOrder: number

  /** Block explorer URL of a transaction, `{tx}` standing for it; '' when none. */
  @column()
  declare explorerTxUrl: string

  /**
   * The operator's request budget of each RPC endpoint of the chain; null:
   * the family's default for the provider (app/chains/chain_rpc.ts).
   */
  @column({
    consume: (value: unknown) => (value === null || value === undefined ? null : Number(value)),
  })
  declare rpcRequestsPerSecond: number | null

  /** Requests per UTC day per endpoint; 0: no daily cap; null: the family's default. */
  @column({
    consume: (value: unknown) => (value === null || value === undefined ? null : Number(value)),
  })
  declare rpcRequestsPerDay: number | null

  /**
   * API key sent to the RPC service (header chosen by the family), as
   * stored: encrypted on every write. rpcApiKey() is the key itself.
   */
  @column({
    serializeAs: null,
    prepare: (value: string) => sealSecret(value, SecretPurpose.chainApiKey),
  })
  declare apiKey: string

  /** The plain API key, decrypted for the RPC calls. */
  rpcApiKey(): string {
    return revealSecret(this.apiKey ?? '', SecretPurpose.chainApiKey)
  }
}
