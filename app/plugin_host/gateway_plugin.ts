import type { PathItemObject, SchemaObject } from '#openapi/openapi_types'
import type { BaseCommand } from '@adonisjs/core/ace'
import type { ChainFamily } from '#chains/chain_family'
import type { CallbackFormat } from '#callbacks/callback_format'
import type { PaymentProvider } from '#payments/payment_provider'
import type { NotificationChannel } from '#notifications/notification_channel'
import type { LiveRateSource } from '#rates/live_rate_source'
import type { SettingDefinition } from '#settings/setting_types'
import type { middleware } from '#start/kernel'
import type { Router } from '@adonisjs/core/http'
import type { I18n } from '@adonisjs/i18n'

/** A token installed with a seeded chain. */
export type SeedToken = {
  symbol: string
  contract: string | null
  decimals: number
  amountPrecision: number
}

/**
 * A chain installed by `node ace setup` (and by every start, when missing:
 * an installation made before a plugin seeded it gains it, after its own
 * chains) when its plugin is on. Chains start enabled but are offered to
 * payers only once a wallet is added, unless `enabled` is false.
 */
export type SeedChain = {
  network: string
  /**
   * False: installed disabled (neither scanned nor offered) until the
   * operator enables it, e.g. once its RPC URL and a wallet are set.
   * Default true.
   */
  enabled?: boolean
  /** A family this plugin (or another enabled one) contributes. */
  family: string
  displayName: string
  /** Family options (chains.options), validated by the family. */
  options?: Record<string, unknown>
  rpcUrls: string[]
  confirmations: number
  scanIntervalSeconds: number
  /** Typical time between two blocks (ms): sizes the late-payment grace. */
  blockTimeMs: number
  /** Transaction page of the network's block explorer, `{tx}` standing for the reference ('' for none). */
  explorerTxUrl: string
  tokens: SeedToken[]
}

/** What a plugin's `routes` receives: the core's router and named middleware. */
export type PluginRouteContext = {
  router: Router
  middleware: typeof middleware
}

export type PluginRoutes = {
  /**
   * Declares the plugin's routes with paths relative to its prefix
   * (`/payments/<plugin name>/v1`), which the core adds.
   */
  define(context: PluginRouteContext): void
  /**
   * Paths (relative to the prefix) called by machines that expect a plain
   * "fail" on error instead of the JSON envelope.
   */
  plainTextFailures?: string[]
}

/**
 * Where the console's Settings pages show a plugin's settings, with their
 * labels (English; other languages from the plugin's
 * `lang/<locale>/settings.json`: `title`, `description`,
 * `field.<key with underscores>.label|help`).
 */
export type PluginAdminSettings = {
  /** A core group to join (`rates` for a rate source); without it, a page of the plugin's own. */
  group?: string
  /** The own page's title and description (English). */
  title?: string
  description?: string
  /** Setting key → its label (English), in page order. */
  labels: Record<string, string>
}

/** What a plugin's integration section is given: one API key, this installation's URL. */
export type IntegrationContext = {
  /** The gateway's base URL, without a trailing slash. */
  baseUrl: string
  pid: string
  /** The admin's language (absent: English, e.g. for the docs and tests). */
  i18n?: I18n
}

/**
 * A part of the console's integration page of an API key (a flavour
 * plugin's base URL and endpoints): rows for the guide's endpoint
 * table and a card drawn by the plugin's own view with `data`.
 */
export type PluginIntegrationSection = {
  /** The card's anchor on the page. */
  id: string
  /** Its Edge view, from the plugin's views/ (`<name>::admin/integration`): it reads `section.data`, `guide` and `key`. */
  view: string
  data(context: IntegrationContext): Record<string, unknown>
  endpoints?(context: IntegrationContext): {
    name: string
    method: string
    url: string
    signed: string
  }[]
}

/** A recurring job of the plugin, run by the scheduler (worker process). */
export type PluginJob = {
  name: string
  /** 1 to 59: a job needing longer pauses keeps its own pace (it is cheap to call). */
  everySeconds: number
  run(): Promise<void>
}

/** A plugin ace command: an AdonisJS command class. */
export type PluginCommand = typeof BaseCommand

/**
 * The one contract between the core and a plugin (a chain family, a
 * hosted payment provider, an order flavour, a notification channel, a
 * rate source, or a third party's). The core reads
 * nothing plugin-specific outside it. Every part is optional but the name and the description.
 */
export type GatewayPlugin = {
  /** Lower-case identifier: the PLUGINS env and the route prefix use it. */
  name: string
  description: string
  /**
   * The plugin's folder (`new URL('./', import.meta.url)`), when it brings
   * texts or views (app/plugin_host/plugin_resources.ts): `lang/<locale>/*.json`
   * (keys `plugins.<name>.<file>.<key>` in the i18n catalogue) and `views/`
   * (the Edge disk `<name>`: `@include('<name>::admin/hint')`).
   */
  folder?: URL
  families?: ChainFamily[]
  callbackFormats?: CallbackFormat[]
  providers?: PaymentProvider[]
  /** Ways to tell the operator (a chat bot, e-mail, an HTTP call): app/notifications/notification_channel.ts. */
  notificationChannels?: NotificationChannel[]
  /** Live exchange-rate sources (an exchange's or an aggregator's API): app/rates/live_rate_source.ts. */
  rateSources?: LiveRateSource[]
  routes?: PluginRoutes
  /** Setting definitions, keyed by setting name (prefix them with the plugin name). */
  settings?: Record<string, SettingDefinition<any>>
  /** Where the console shows those settings, and their labels. */
  adminSettings?: PluginAdminSettings
  /** Its parts of each API key's integration page on the console. */
  integrationSections?: PluginIntegrationSection[]
  seed?: {
    chains?: SeedChain[]
    /** Settings stored on installation unless already present. */
    settings?: Record<string, string>
  }
  commands?: PluginCommand[]
  jobs?: PluginJob[]
  /**
   * Sections of the public config endpoint (`GET /payments/native/v1/config`)
   * this plugin answers, by key. The interface spec requires some of them
   * whether or not the plugin is on: `whenOff` is the section while it is
   * off (the core reads it from every known plugin, on or off).
   */
  configSections?: Record<string, PluginConfigSection>
  /** What the plugin adds to the merchant API's OpenAPI document (app/openapi). */
  openapi?: PluginOpenApi
}

/** One section of the public config endpoint, answered by a plugin. */
export type PluginConfigSection = {
  /** The section's value, asked on each config request (cached like the rest by the caller). */
  answer(): Promise<unknown>
  /** The section while the plugin is off (nothing configured, not enabled). */
  whenOff: unknown
  /** Its JSON schema in the OpenAPI document's `PublicConfig`. */
  schema: SchemaObject
}

/** A plugin's part of the OpenAPI document: the document lists it while the plugin is on. */
export type PluginOpenApi = {
  /** A paragraph (Markdown) added to the document's description. */
  description?: string
  /** Callbacks the plugin's formats send to merchants, by operation name (`webhooks`). */
  webhooks?: Record<string, PathItemObject>
}

/** Identity function that gives a plugin definition its type. */
export function definePlugin<const T extends GatewayPlugin>(plugin: T): T {
  return plugin
}

/** A module that contributes a plugin: its default export. */
export type PluginModule = { default: GatewayPlugin }
