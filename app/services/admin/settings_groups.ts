import { textOr } from '#support/text/catalogue'
import type { I18n } from '@adonisjs/i18n'
import settings, { SettingsInputError } from '#settings/settings_service'
import type { SettingDefinition } from '#settings/setting_types'
import rateAdmin from '#services/operators/rate_admin'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'
import { MASK, maskSecret } from '#support/http/redaction'
import { OperatorError } from '#support/cli/operator_error'
import pluginRegistry from '#plugin_host/plugin_registry'

/**
 * The console's settings pages: every setting belongs to exactly one group
 * (tests/unit/settings_groups.spec.ts checks that no definition of the
 * core or of a bundled plugin is left out). A setting of a plugin from
 * elsewhere (PLUGIN_MODULES) that no group names lands in `plugins`.
 */
/**
 * A core group's id, or a plugin's own group (its name). Plugins place
 * their settings through the contract's `adminSettings`: in a group of
 * their own, or joining a core one (the rate sources join `rates`).
 */
export type SettingsGroupId = string

export type SettingsGroup = {
  id: SettingsGroupId
  title: string
  description: string
  /** The plugin whose settings these are: the group is empty while it is off. */
  plugin?: string
  /** Setting key → label shown beside its input. */
  labels: Record<string, string>
  /**
   * Setting key → the plugin that placed it here (its texts are that
   * plugin's: `plugins.<name>.settings.field.<key>.label|help`).
   */
  labelPlugins?: Record<string, string>
}

/** The core's groups; the plugins' are added by allSettingsGroups(). */
const CORE_GROUPS: readonly SettingsGroup[] = [
  {
    id: 'site',
    title: 'Site and branding',
    description: 'What payers see on the cashier page: names, logo, support link and colours.',
    labels: {
      'site.cashier_name': 'Cashier name',
      'site.website_title': 'Page title',
      'site.logo_url': 'Logo URL',
      'site.support_link': 'Support link',
      'site.background_color': 'Background colour',
      'site.background_image_url': 'Background image URL',
    },
  },
  {
    id: 'orders',
    title: 'Order lifetime',
    description: 'How long an order waits for its payment, and how amounts are kept apart.',
    labels: {
      'order.expiration_minutes': 'Order lifetime (minutes)',
      'order.late_payment_margin_seconds': 'Late payment margin (seconds)',
      'order.amount_max_steps': 'Amount steps tried',
    },
  },
  {
    id: 'rates',
    title: 'Rates',
    description:
      'A fixed rate wins; a pair without one follows the live sources (their median, with outlier and staleness guards), or the single source URL while no source is chosen.',
    labels: {
      'rate.sources': 'Live sources (in order)',
      'rate.min_sources': 'Sources a pair needs',
      'rate.max_deviation_percent': 'Outlier beyond (%)',
      'rate.max_age_seconds': 'Answer lifetime (seconds)',
      'rate.refresh_seconds': 'Refresh every (seconds)',
      'rate.currencies': 'Currencies kept priced',
      'rate.api_url': 'Live source URL',
      'rate.cache_ttl_seconds': 'Live rate lifetime (seconds)',
      'rate.timeout_seconds': 'Live source timeout (seconds)',
    },
  },
  {
    id: 'callbacks',
    title: 'Callbacks',
    description: 'How merchants are told that an order is paid, and how often it is tried again.',
    labels: {
      'order_notice_max_retry': 'Retries after a failure',
      'callback_retry_base_seconds': 'Retry base delay (seconds)',
      'callbacks.timeout_seconds': 'Attempt timeout (seconds)',
      'callbacks.allow_private_targets': 'Allow private addresses',
      'callbacks.concurrency': 'Callbacks in flight per worker',
      'callbacks.per_host_concurrency': 'In flight per merchant host',
    },
  },
  {
    id: 'rate_limits',
    title: 'Rate limits',
    description: 'Requests per minute accepted from merchants, payers and the provider.',
    labels: {
      'rate_limit.store': 'Counter store',
      'rate_limit.create_per_minute': 'Order creations per minute',
      'rate_limit.query_per_minute': 'Order queries per minute',
      'rate_limit.cashier_per_minute': 'Cashier requests per minute',
      'rate_limit.notify_per_minute': 'Provider notifications per minute',
      'rate_limit.submit_per_order': 'Hash submissions per order',
      'rate_limit.submit_window_minutes': 'Hash submission window (minutes)',
    },
  },
  {
    id: 'chains',
    title: 'Chain watching',
    description: 'Defaults of every chain scanner and of the requests sent to chain nodes.',
    labels: {
      'chains.rpc_timeout_seconds': 'RPC timeout (seconds)',
      'chains.rpc_cooldown_seconds': 'Failing endpoint cool-down (seconds)',
      'chains.rpc_requests_per_second': 'RPC requests per second',
      'chains.rpc_requests_per_day': 'RPC requests per day',
      'chains.verify_requests_per_second': 'Hash-check RPC requests per second',
      'chains.verify_requests_per_day': 'Hash-check RPC requests per day',
      'chains.verify_failed_cache_minutes': 'Failed hash remembered (minutes)',
      'chains.dust_percent': 'Dust threshold (%)',
      'chains.max_blocks_per_scan': 'Blocks per scan',
      'chains.balance_check_minutes': 'Balance watch interval (minutes)',
    },
  },
  {
    id: 'metrics',
    title: 'Monitoring',
    description:
      'Who may read GET /metrics: a bearer token, an IP allow-list, or both (neither: this host only).',
    labels: {
      'metrics.token': 'Metrics token',
      'metrics.allowed_ips': 'Allowed addresses',
    },
  },
  {
    id: 'console',
    title: 'Console sign-in',
    description: 'What the console asks of the people who sign in to it.',
    labels: {
      'console.require_2fa_admins': 'Admins must use two-factor sign-in',
    },
  },
  {
    id: 'plugins',
    title: 'Other plugins',
    description: 'Settings of plugins loaded from elsewhere (PLUGIN_MODULES).',
    labels: {},
  },
]

/** How a setting is entered on its page. */
export type SettingInput = 'text' | 'number' | 'url' | 'select' | 'boolean' | 'secret' | 'list'

export type SettingField = {
  key: string
  label: string
  description: string
  input: SettingInput
  /** The value as text for the form ('' for a secret: it is never sent to the browser). */
  value: string
  /** The default as text ('' when empty). */
  defaultText: string
  /** A row exists (the value was set), rather than the default applying. */
  stored: boolean
  options?: readonly string[]
  bounds?: { min: number; max: number }
  maxLength?: number
  /** Secrets only: whether one is stored, and its masked form (…last 4 of a long one, else ***). */
  secret?: { set: boolean; masked: string }
}

export type SettingsGroupPage = {
  group: SettingsGroup
  fields: SettingField[]
  /** Set when the group's plugin is turned off: its stored values are kept, not editable. */
  turnedOffPlugin: string | null
}

export type SettingsGroupSummary = {
  id: SettingsGroupId
  title: string
  count: number
  turnedOffPlugin: string | null
}

/** What a form posts for a group: key → typed text (absent or undefined: unchanged; null: emptied); `clear`: secrets to empty. */
export type SettingsGroupInput = {
  values: Record<string, string | null | undefined>
  clear?: string[]
}

/**
 * Every settings page in order: the core's, each plugin's own group
 * (before `metrics`, in the plugins' order; on or off: an off plugin's page
 * says so), and the fallback `plugins` last. A plugin joining a core group
 * adds its labels there.
 */
export function allSettingsGroups(): SettingsGroup[] {
  // The plugins are fixed once activated: built once per set of plugins, not per call (the audit
  // log's page asks for every row).
  if (built?.plugins !== pluginRegistry.all) {
    built = { plugins: pluginRegistry.all, groups: buildGroups() }
  }
  return built.groups
}

let built: { plugins: readonly unknown[]; groups: SettingsGroup[] } | null = null

function buildGroups(): SettingsGroup[] {
  const groups: SettingsGroup[] = CORE_GROUPS.map((group) => ({
    ...group,
    labels: { ...group.labels },
    labelPlugins: {} as Record<string, string>,
  }))
  const own: SettingsGroup[] = []
  for (const plugin of pluginRegistry.all) {
    const placed = plugin.adminSettings
    if (!placed) continue
    const joined = placed.group ? groups.find((group) => group.id === placed.group) : undefined
    if (joined) {
      Object.assign(joined.labels, placed.labels)
      for (const key of Object.keys(placed.labels)) joined.labelPlugins![key] = plugin.name
      continue
    }
    own.push({
      id: plugin.name,
      title: placed.title ?? plugin.name,
      description: placed.description ?? plugin.description,
      plugin: plugin.name,
      labels: { ...placed.labels },
      labelPlugins: Object.fromEntries(Object.keys(placed.labels).map((key) => [key, plugin.name])),
    })
  }
  const at = groups.findIndex((group) => group.id === 'metrics')
  groups.splice(at === -1 ? groups.length - 1 : at, 0, ...own)
  return groups
}

/** The keys every group names (the fallback `plugins` names none). */
export function groupedKeys(): Map<string, SettingsGroupId> {
  const keys = new Map<string, SettingsGroupId>()
  for (const group of allSettingsGroups()) {
    for (const key of Object.keys(group.labels)) keys.set(key, group.id)
  }
  return keys
}

export class UnknownSettingsGroupError extends Error {}

/**
 * Which page shows each of `keys` (the loaded settings), in the order of
 * the group's labels; a key no group names goes to `plugins`.
 */
export function keysByGroup(keys: string[]): Map<SettingsGroupId, string[]> {
  const named = groupedKeys()
  const byGroup = new Map<SettingsGroupId, string[]>()
  for (const key of keys) {
    // The notification channels' settings have their page: Notifications.
    if (key.startsWith('notify.')) continue
    const id = named.get(key) ?? 'plugins'
    byGroup.set(id, [...(byGroup.get(id) ?? []), key])
  }
  for (const group of allSettingsGroups()) {
    const order = Object.keys(group.labels)
    const shown = byGroup.get(group.id)
    if (shown && order.length > 0) shown.sort((a, b) => order.indexOf(a) - order.indexOf(b))
  }
  return byGroup
}

/** The group's plugin when it is turned off (`off`: key → plugin of the settings hidden). */
export function turnedOffPlugin(group: SettingsGroup, off: Map<string, string>): string | null {
  if (!group.plugin) return null
  return Object.keys(group.labels).some((key) => off.get(key) === group.plugin)
    ? group.plugin
    : null
}

/**
 * A setting's name in the console catalogue: dots become underscores
 * (`site.logo_url` → `site_logo_url`, under `admin.settings.field.` or a plugin's own).
 */
export function settingMessageKey(key: string): string {
  return key.replace(/\./g, '_')
}

/** The admin's words for `key`, or `english` when the catalogue has none (a plugin from elsewhere). */
const translated = (i18n: I18n, key: string, english: string, values?: Record<string, unknown>) =>
  textOr(i18n, key, english, values)

/** Where a group's texts are: a plugin's own group in its plugin's catalogue. */
export function groupBase(group: Pick<SettingsGroup, 'id' | 'plugin'>): string {
  return group.plugin ? `plugins.${group.plugin}.settings` : `admin.settings.group.${group.id}`
}

/** A group's title and description in the admin's language (English: the group's own). */
export function localizedGroup(group: SettingsGroup, i18n: I18n): SettingsGroup {
  const base = groupBase(group)
  return {
    ...group,
    title: translated(i18n, `${base}.title`, group.title),
    description: translated(i18n, `${base}.description`, group.description),
  }
}

/**
 * A setting's label and help in the admin's language: the catalogue's
 * `admin.settings.field.<key with underscores>.label` / `.help`, else the
 * English of the group's label and of the definition (which `settings:get`
 * prints too).
 */
export function localizedSetting(
  i18n: I18n,
  key: string,
  english: { label: string; description: string },
  prefix = 'admin.settings.field.'
) {
  const base = prefix + settingMessageKey(key)
  return {
    label: translated(i18n, `${base}.label`, english.label),
    description: translated(i18n, `${base}.help`, english.description),
  }
}

/** A settings page in the admin's language: group title, description, and each field's label and help. */
export function localizedPage(page: SettingsGroupPage, i18n: I18n): SettingsGroupPage {
  return {
    ...page,
    group: localizedGroup(page.group, i18n),
    fields: page.fields.map((field) => ({
      ...field,
      ...localizedSetting(i18n, field.key, field, fieldPrefix(page.group, field.key)),
    })),
  }
}

/** Where a field's texts are: its plugin's catalogue when a plugin placed it, else the console's. */
export function fieldPrefix(group: SettingsGroup, key: string): string {
  const plugin = group.labelPlugins?.[key]
  return plugin ? `plugins.${plugin}.settings.field.` : 'admin.settings.field.'
}

/** The sub-navigation's titles in the admin's language. */
export function localizedSummaries(
  summaries: SettingsGroupSummary[],
  i18n: I18n
): SettingsGroupSummary[] {
  const plugins = new Map(allSettingsGroups().map((group) => [group.id, group.plugin]))
  return summaries.map((summary) => ({
    ...summary,
    title: translated(
      i18n,
      `${groupBase({ id: summary.id, plugin: plugins.get(summary.id) })}.title`,
      summary.title
    ),
  }))
}

/** Item hints of list settings (SettingValueError `"x" is not <hint>`), by catalogue name. */
const ITEM_HINTS: Record<string, string> = {
  'a source name': 'source',
  'an e-mail address': 'email',
  'an IP address or CIDR range': 'ip',
  'an event name, a prefix like order.* or *': 'event',
  'a chat id (a whole number) or an @channelname': 'chat',
  'a valid item': 'item',
}

/**
 * The messages a refused value gets (the setting types' SettingValueError,
 * shared with `settings:set`, and this file's own), as patterns → catalogue
 * key under `admin.settings.errors.` and its values. A message none
 * matches is shown as it is (English).
 */
const VALUE_ERRORS: [RegExp, string, (match: RegExpExecArray) => Record<string, string>][] = [
  [/^must be a whole number$/, 'whole_number', () => ({})],
  [/^must be between (-?\d+) and (-?\d+)$/, 'between', (m) => ({ min: m[1], max: m[2] })],
  [/^must be at most (\d+) characters$/, 'max_characters', (m) => ({ max: m[1] })],
  [/^must match (.+)$/, 'pattern', (m) => ({ pattern: m[1] })],
  [/^must be an http\(s\) URL or empty$/, 'url', () => ({})],
  [/^must be true or false$/, 'boolean', () => ({})],
  [/^must be one of (.+)$/, 'one_of', (m) => ({ options: m[1] })],
  [/^must have at most (\d+) items$/, 'max_items', (m) => ({ max: m[1] })],
  [/^must list at most (\d+) addresses or ranges$/, 'max_addresses', (m) => ({ max: m[1] })],
  [/^must be a time zone name such as UTC or Europe\/Berlin$/, 'time_zone', () => ({})],
  [
    /^must be HH:MM-HH:MM \(24-hour clock, two different times\) or empty$/,
    'quiet_hours',
    () => ({}),
  ],
  [/^must be an address \(alerts@example\.com\) or Name <address>$/, 'email_from', () => ({})],
  [/^is not a secret of this page$/, 'not_secret', () => ({})],
  [/^is not a setting of the (.+) page$/, 'other_page', (m) => ({ group: m[1] })],
  [/^must be text$/, 'text', () => ({})],
  [/^type a new value or tick clear, not both$/, 'clear_and_value', () => ({})],
]

/** A refused value's message at its field (`<label> <message>.`), in the admin's language. */
export function settingErrorText(i18n: I18n, label: string, message: string): string {
  let text = message
  const item = /^"(.*)" is not (.+)$/s.exec(message)
  if (item && ITEM_HINTS[item[2]]) {
    text = i18n.t('admin.settings.errors.not_item', {
      value: item[1],
      hint: i18n.t('admin.settings.errors.hint.' + ITEM_HINTS[item[2]]),
    })
  } else {
    for (const [pattern, name, values] of VALUE_ERRORS) {
      const match = pattern.exec(message)
      if (match) {
        const given = values(match)
        // The page named by its title: in the admin's words too.
        const named = allSettingsGroups().find((group) => group.title === given.group)
        if (named) given.group = localizedGroup(named, i18n).title
        text = i18n.t('admin.settings.errors.' + name, given)
        break
      }
    }
  }
  return i18n.t('admin.settings.field_error', { label, message: text })
}

function inputOf(definition: SettingDefinition<unknown>): SettingInput {
  if (definition.secret) return 'secret'
  switch (definition.type) {
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'enum':
      return 'select'
    case 'url':
      return 'url'
    case 'list':
      return 'list'
    default:
      return 'text'
  }
}

function maskedSecret(key: string, stored: string): string {
  try {
    return maskSecret(revealSecret(stored, SecretPurpose.setting(key)))
  } catch {
    return MASK
  }
}

/**
 * Reads and saves the settings one group at a time, through the settings
 * service (the same parsing and audit as `settings:set`); fixed rates go
 * through RateAdmin (the same rules and audit as `rate:set`).
 */
export class SettingsGroups {
  constructor(protected rates = rateAdmin) {}

  group(id: string): SettingsGroup {
    const group = allSettingsGroups().find((entry) => entry.id === id)
    if (!group) throw new UnknownSettingsGroupError(`No settings group "${id}"`)
    return group
  }

  /** The groups in page order, with how many settings each shows now (empty fallback left out). */
  async summaries(): Promise<SettingsGroupSummary[]> {
    const keys = await this.#keysByGroup()
    const off = settings.turnedOff()
    return allSettingsGroups()
      .filter((group) => group.id !== 'plugins' || (keys.get('plugins') ?? []).length > 0)
      .map((group) => ({
        id: group.id,
        title: group.title,
        count: (keys.get(group.id) ?? []).length,
        turnedOffPlugin: turnedOffPlugin(group, off),
      }))
  }

  async page(id: string): Promise<SettingsGroupPage> {
    const group = this.group(id)
    const keysByGroupId = await this.#keysByGroup()
    const keys = keysByGroupId.get(group.id) ?? []
    const settingRows = await settings.list()
    const rows = new Map(settingRows.map((row) => [row.key, row]))
    const fields = keys.map((key) => {
      const definition = settings.definition(key)
      const row = rows.get(key)!
      const field: SettingField = {
        key,
        label: group.labels[key] ?? key,
        // A sentence: the page adds the default after it.
        description: /[.!?)]$/.test(definition.description)
          ? definition.description
          : `${definition.description}.`,
        input: inputOf(definition),
        value: definition.secret ? '' : definition.serialize(row.value),
        defaultText: definition.secret ? '' : definition.serialize(definition.default),
        stored: row.stored,
        options: definition.options,
        bounds: definition.bounds,
        maxLength: definition.maxLength,
      }
      if (definition.secret) {
        const stored = typeof row.value === 'string' ? row.value : ''
        field.secret = {
          set: stored !== '',
          masked: stored === '' ? '' : maskedSecret(key, stored),
        }
      }
      return field
    })
    return { group, fields, turnedOffPlugin: turnedOffPlugin(group, settings.turnedOff()) }
  }

  /**
   * Saves a group's form whole or not at all. A key the form does not send
   * is left as it is; an emptied text is stored as ''. A secret left blank
   * keeps its stored value; listed in `clear`, it is emptied (typing a new
   * one and ticking clear at once is refused). Throws SettingsInputError
   * (key → message) without storing anything. Returns the changed keys.
   */
  async save(id: string, input: SettingsGroupInput): Promise<string[]> {
    const group = this.group(id)
    const off = turnedOffPlugin(group, settings.turnedOff())
    if (off) {
      throw new OperatorError(
        `The ${off} plugin is turned off (PLUGINS): its settings cannot be changed until it is back`,
        { key: 'settings_plugin_off', args: { plugin: off } }
      )
    }
    const keysByGroupId = await this.#keysByGroup()
    const keys = keysByGroupId.get(group.id) ?? []
    const clear = new Set(input.clear ?? [])
    const raws: Record<string, string> = {}
    const errors: Record<string, string> = {}
    for (const key of clear) {
      if (!keys.includes(key) || !settings.definition(key).secret)
        errors[key] = 'is not a secret of this page'
    }
    for (const [key, given] of Object.entries(input.values)) {
      if (given === undefined) continue
      if (!keys.includes(key)) {
        errors[key] = `is not a setting of the ${group.title} page`
        continue
      }
      const text = given === null ? '' : given
      if (typeof text !== 'string') {
        errors[key] = 'must be text'
        continue
      }
      if (settings.definition(key).secret) {
        if (clear.has(key) && text !== '') errors[key] = 'type a new value or tick clear, not both'
        else if (text !== '') raws[key] = text
        continue
      }
      raws[key] = text
    }
    for (const key of clear) if (!errors[key]) raws[key] = ''
    if (Object.keys(errors).length > 0) throw new SettingsInputError(errors)
    return settings.setMany(raws)
  }

  /** Fixed rates, for the rates page. */
  fixedRates() {
    return this.rates.list()
  }

  /** Sets (or replaces) one fixed rate: RateAdmin's rules and audit. */
  setFixedRate(token: string, fiat: string, rate: string) {
    return this.rates.set(token, fiat, rate, { fixedOnly: true })
  }

  async #keysByGroup(): Promise<Map<SettingsGroupId, string[]>> {
    const settingRows = await settings.list()
    return keysByGroup(settingRows.map((row) => row.key))
  }
}

const settingsGroups = new SettingsGroups()
export default settingsGroups
