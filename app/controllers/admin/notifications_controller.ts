import pluginRegistry from '#plugin_host/plugin_registry'
import type { HttpContext } from '@adonisjs/core/http'
import type { I18n } from '@adonisjs/i18n'
import db from '@adonisjs/lucid/services/db'
import settings, { SettingsInputError } from '#settings/settings_service'
import type { SettingDefinition } from '#settings/setting_types'
import i18nManager from '@adonisjs/i18n/services/main'
import notificationChannels from '#notifications/channel_registry'
import type { NotificationChannel } from '#notifications/notification_channel'
import { raiseNotification } from '#notifications/notifier'
import auditLog from '#services/audit/audit_log'
import { utcSecond } from '#services/admin/admin_format'
import { AdminNotFound } from '#admin/admin_errors'
import { adminUrl } from '#admin/admin_paths'
import { flashInputWithoutSecrets } from '#admin/admin_session'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'
import { MASK, maskSecret, redactSecrets, redactUrl, urlCredentials } from '#support/http/redaction'
import { OperatorError } from '#support/cli/operator_error'
import { settingErrorText, settingMessageKey } from '#services/admin/settings_groups'

/** The notify.* settings that are no channel's: the page's "Delivery" form. */
const GLOBAL_LABELS: Record<string, string> = {
  'notify.time_zone': 'Time zone',
  'notify.max_attempts': 'Attempts before giving up',
  'notify.callback_failing_after': 'Failed callback attempts before an alert',
}

/** The rules every channel has (app/notifications/channel_settings.ts), in page order. */
const RULE_LABELS: Record<string, string> = {
  enabled: 'Send notifications',
  events: 'Events',
  min_severity: 'Least severity',
  quiet_hours: 'Quiet hours',
  cap_per_hour: 'Messages of one event per hour',
  muted_until: 'Muted until (epoch ms)',
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'folded'] as const
const DELIVERIES_SHOWN = 50

type SettingInput = 'text' | 'number' | 'url' | 'select' | 'boolean' | 'secret' | 'list'

/** One setting as its form shows it (secrets: never their value, only whether one is stored). */
type NotifyField = {
  key: string
  name: string
  label: string
  help: string
  input: SettingInput
  value: string
  stored: boolean
  options?: readonly string[]
  /** What the admin reads for each option (the severities), when not the value itself. */
  optionLabels?: Record<string, string>
  bounds?: { min: number; max: number }
  secret?: { set: boolean; masked: string }
}

/** The keys of the loaded settings (the core's and the enabled plugins'). */
async function settingKeys(): Promise<string[]> {
  const rows = await settings.list()
  return rows.map((row) => row.key)
}

/** A setting's form field: dots become `__` (a dotted name reads as a path in flash messages). */
function fieldName(key: string): string {
  return key.replace(/\./g, '__')
}

/** The checkbox that empties a stored secret (its own name per field: one ticked box clears one secret). */
function clearName(key: string): string {
  return `clear__${fieldName(key)}`
}

/** `bot_token` → "Bot token", with the usual capitals (URL, TLS, API, IDs); a channel's own acronyms come from its labels. */
function labelOf(suffix: string): string {
  const text = suffix
    .split('_')
    .map((word) => ({ url: 'URL', tls: 'TLS', api: 'API', ids: 'IDs', id: 'ID' })[word] ?? word)
    .join(' ')
  return text.charAt(0).toUpperCase() + text.slice(1)
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

/**
 * A target as an admin may see it: a URL without its user info, query
 * string or key-like path segments (an HTTP channel's token may live there); an
 * e-mail address or a chat id as it is.
 */
export function shownTarget(target: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) return target
  let url: URL
  try {
    url = new URL(redactUrl(target))
  } catch {
    return MASK
  }
  if (url.username || url.password) {
    url.username = MASK
    url.password = ''
  }
  const query = url.search ? `?${MASK}` : ''
  url.search = ''
  url.hash = ''
  return `${url.toString()}${query}`
}

/** An error text without the credentials of the target it names. */
function shownError(error: string, target: string): string {
  return redactSecrets(error, urlCredentials(target))
}

/** A definition's text as a sentence (the form adds the default after it). */
function sentence(description: string): string {
  return /[.!?)]$/.test(description) ? description : `${description}.`
}

/**
 * A setting's label and help in the admin's language. The catalogue's
 * English must say what the definition says (else a plugin from elsewhere
 * wrote its own text): then both come from the catalogue; otherwise the
 * English label and the definition's text are shown.
 */
function fieldWords(
  i18n: I18n,
  key: string,
  english: { label: string; help: string }
): { label: string; help: string } {
  const english18n = i18nManager.locale('en')
  // A channel's own settings are worded by its plugin (lang/<locale>/settings.json), the
  // core's (notify.time_zone …) by the console catalogue.
  const channel = /^notify\.([a-z0-9_-]+)\./.exec(key)?.[1]
  const own = channel ? `${channelTextPrefix(channel)}.field.${settingMessageKey(key)}` : null
  let base =
    own && english18n.resolveIdentifier(`${own}.help`)
      ? own
      : `admin.notifications.field.${settingMessageKey(key)}`
  let values: Record<string, string> = {}
  const rule = /^notify\.([a-z0-9_-]+)\.([a-z_]+)$/.exec(key)
  if (rule && rule[2] in RULE_LABELS && !english18n.resolveIdentifier(`${base}.help`)) {
    base = `admin.notifications.rule.${rule[2]}`
    values = { channel: rule[1] }
  }
  if (
    !english18n.resolveIdentifier(`${base}.help`) ||
    english18n.t(`${base}.help`, values) !== english.help ||
    english18n.t(`${base}.label`) !== english.label
  )
    return english
  return { label: i18n.t(`${base}.label`), help: i18n.t(`${base}.help`, values) }
}

async function fieldsOf(
  keys: string[],
  labels: (key: string) => string,
  i18n: I18n
): Promise<NotifyField[]> {
  const list = await settings.list()
  const rows = new Map(list.map((row) => [row.key, row]))
  return keys.map((key) => {
    const definition = settings.definition(key)
    const row = rows.get(key)!
    const words = fieldWords(i18n, key, {
      label: labels(key),
      help: sentence(definition.description),
    })
    const description = words.help
    const input = inputOf(definition)
    const defaultText = definition.secret ? '' : definition.serialize(definition.default)
    const field: NotifyField = {
      key,
      name: fieldName(key),
      label: words.label,
      help:
        input === 'secret'
          ? description
          : i18n.t('admin.settings.help_default', {
              help: description,
              value: defaultText === '' ? i18n.t('admin.settings.default_empty') : defaultText,
            }),
      input,
      value: definition.secret ? '' : definition.serialize(row.value),
      stored: row.stored,
      options: definition.options,
      optionLabels: key.endsWith('.min_severity')
        ? Object.fromEntries(
            (definition.options ?? []).map((option) => [
              option,
              i18n.t('admin.notifications.severity.' + option, {}, option),
            ])
          )
        : undefined,
      bounds: definition.bounds,
    }
    if (definition.secret) {
      const stored = typeof row.value === 'string' ? row.value : ''
      let masked = ''
      if (stored !== '') {
        try {
          masked = maskSecret(revealSecret(stored, SecretPurpose.setting(key)))
        } catch {
          masked = MASK
        }
      }
      field.secret = { set: stored !== '', masked }
      field.help = field.secret.set
        ? i18n.t('admin.settings.secret_stored', { help: description, masked })
        : i18n.t('admin.settings.secret_none', { help: description })
    }
    return field
  })
}

/** The loaded settings of a channel: its rules first (in their usual order), then its own. */
async function channelKeys(channel: string): Promise<string[]> {
  const prefix = `notify.${channel}.`
  const all = await settingKeys()
  // State the gateway keeps for itself (a channel's polling offset) is no field of a form.
  const keys = all.filter((key) => key.startsWith(prefix) && !settings.definition(key).internal)
  const rules = Object.keys(RULE_LABELS)
    .map((rule) => `${prefix}${rule}`)
    .filter((key) => keys.includes(key))
  return [...rules, ...keys.filter((key) => !rules.includes(key))]
}

function channelLabel(channel: string) {
  const prefix = `notify.${channel}.`
  return (key: string) => {
    const suffix = key.slice(prefix.length)
    return RULE_LABELS[suffix] ?? labelOf(suffix)
  }
}

/**
 * What the channels' problem() says (the bundled plugins' English, joined
 * by "; "), in the admin's language: patterns → catalogue key under
 * `admin.notifications.problem.`. A part none matches is shown as it is.
 */
const PROBLEMS: [RegExp, string, (match: RegExpExecArray) => Record<string, string>][] = [
  [
    /^(notify\.[\w.]+\.secret) is empty \(the receiver could not check the signature\)$/,
    'unsigned_secret',
    (m) => ({ setting: m[1] }),
  ],
  [/^(notify\.[\w.]+) is empty$/, 'empty', (m) => ({ setting: m[1] })],
  [/^no bot token \((notify\.[\w.]+)\)$/, 'no_bot_token', (m) => ({ setting: m[1] })],
  [/^no chat ids \((notify\.[\w.]+)\)$/, 'no_chat_ids', (m) => ({ setting: m[1] })],
  [/^the bot token cannot be read: (.*)$/s, 'token_unreadable', (m) => ({ error: m[1] })],
  [/^not configured: set (notify\.[\w., ]+)$/, 'not_configured', (m) => ({ settings: m[1] })],
  [
    /^(notify\.[\w.]+) is set but (notify\.[\w.]+) is empty$/,
    'user_without_password',
    (m) => ({ user: m[1], password: m[2] }),
  ],
  [/^its settings cannot be checked: (.*)$/s, 'unchecked', (m) => ({ error: m[1] })],
]

export function problemText(i18n: I18n, problem: string): string {
  if (problem === '') return ''
  return problem
    .split('; ')
    .map((part) => {
      for (const [pattern, name, values] of PROBLEMS) {
        const match = pattern.exec(part)
        if (match) return i18n.t('admin.notifications.problem.' + name, values(match))
      }
      return part
    })
    .join(i18n.t('admin.notifications.problem.separator'))
}

/**
 * Where the plugin of a channel keeps its console words:
 * `plugins.<plugin>.settings` (its lang/<locale>/settings.json: `description`,
 * `field.<setting with underscores>.label|help`).
 */
export function channelTextPrefix(channel: string): string {
  const plugin = pluginRegistry.all.find((candidate) =>
    (candidate.notificationChannels ?? []).some((item) => item.name === channel)
  )
  return `plugins.${plugin?.name ?? channel}.settings`
}

/** A channel's description in the admin's language (its plugin's words when their English is the channel's own). */
function channelDescription(i18n: I18n, channel: NotificationChannel): string {
  const key = `${channelTextPrefix(channel.name)}.description`
  const english = i18nManager.locale('en')
  return english.resolveIdentifier(key) && english.t(key) === channel.description
    ? i18n.t(key)
    : channel.description
}

async function channelView(channel: NotificationChannel, now: number, i18n: I18n) {
  const keys = await channelKeys(channel.name)
  const fields = await fieldsOf(keys, channelLabel(channel.name), i18n)
  const rules = fields.filter(
    (field) => field.key.slice(`notify.${channel.name}.`.length) in RULE_LABELS
  )
  const own = fields.filter((field) => !rules.includes(field))
  let problem: string
  try {
    problem = await channel.problem()
  } catch (error) {
    problem = `its settings cannot be checked: ${(error as Error).message}`
  }
  const enabled = Boolean(await settings.read(`notify.${channel.name}.enabled`).catch(() => false))
  const mutedUntil = Number(
    await settings.read(`notify.${channel.name}.muted_until`).catch(() => 0)
  )
  const stopped = await db
    .from('notification_targets')
    .where('channel', channel.name)
    .orderBy('stopped_at', 'desc')
    .select('id', 'target', 'reason', 'stopped_at')
  return {
    name: channel.name,
    description: channelDescription(i18n, channel),
    enabled,
    problem: problemText(i18n, problem),
    mutedUntil: mutedUntil > now ? mutedUntil : 0,
    rules,
    own,
    stopped: stopped.map((row) => ({
      id: Number(row.id),
      target: shownTarget(row.target),
      reason: shownError(row.reason, row.target),
      stoppedAt: Number(row.stopped_at),
    })),
  }
}

/** The list's filters from the query string: unknown values are left out (the list is unfiltered by them). */
function deliveryFilters(qs: Record<string, unknown>) {
  const channel = typeof qs.channel === 'string' ? qs.channel : ''
  const status = typeof qs.status === 'string' ? qs.status : ''
  return {
    channel: /^[a-z0-9_-]{1,32}$/.test(channel) ? channel : '',
    status: (DELIVERY_STATUSES as readonly string[]).includes(status) ? status : '',
  }
}

async function lastDeliveries(filters: { channel: string; status: string }) {
  const query = db
    .from('notification_deliveries as d')
    .join('notification_events as e', 'e.id', 'd.event_id')
    .select(
      'd.id',
      'd.channel',
      'd.target',
      'd.status',
      'd.attempts',
      'd.last_error',
      'd.next_attempt_at',
      'd.delivered_at',
      'd.created_at',
      'e.name as event',
      'e.severity',
      'e.created_at as raised_at'
    )
    .orderBy('d.id', 'desc')
    .limit(DELIVERIES_SHOWN)
  if (filters.channel) query.where('d.channel', filters.channel)
  if (filters.status) query.where('d.status', filters.status)
  const rows = await query
  return rows.map((row: Record<string, any>) => ({
    id: Number(row.id),
    event: String(row.event),
    severity: String(row.severity),
    channel: String(row.channel),
    target: shownTarget(String(row.target)),
    status: String(row.status),
    attempts: Number(row.attempts),
    lastError: shownError(String(row.last_error ?? ''), String(row.target)),
    raisedAt: Number(row.raised_at),
    deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
    nextAttemptAt: Number(row.next_attempt_at),
  }))
}

/**
 * The Notifications page: each channel of the enabled plugins with its
 * rules and settings (saved whole through the settings service, which
 * parses and audits them as `settings:set` does), a test message, its
 * stopped targets (resumed here, audited), the delivery-wide settings and
 * the last deliveries with their outcome.
 */
export default class NotificationsController {
  #audit = auditLog

  async index({ request, view, i18n }: HttpContext) {
    const now = Date.now()
    const channels = await Promise.all(
      notificationChannels.all().map((channel) => channelView(channel, now, i18n))
    )
    const all = await settingKeys()
    const globalKeys = all.filter((key) => key in GLOBAL_LABELS)
    const global = await fieldsOf(globalKeys, (key) => GLOBAL_LABELS[key], i18n)
    const filters = deliveryFilters(request.qs())
    const deliveries = await lastDeliveries(filters)
    return view.render('admin/notifications/index', {
      channels,
      deliveryFields: global,
      deliveries,
      filters,
      filtered: filters.channel !== '' || filters.status !== '',
      statuses: DELIVERY_STATUSES,
      shown: DELIVERIES_SHOWN,
      utcSecond,
      clearName,
    })
  }

  async saveGlobal(ctx: HttpContext) {
    const all = await settingKeys()
    const keys = all.filter((key) => key in GLOBAL_LABELS)
    await this.#save(
      ctx,
      keys,
      (key) => GLOBAL_LABELS[key],
      ctx.i18n.t('admin.notifications.title_delivery')
    )
    return ctx.response.redirect(`${adminUrl('/notifications')}#delivery`)
  }

  async saveChannel(ctx: HttpContext) {
    const channel = this.#channel(ctx, ctx.params.channel)
    const keys = await channelKeys(channel.name)
    await this.#save(
      ctx,
      keys,
      channelLabel(channel.name),
      ctx.i18n.t('admin.notifications.title_channel', { channel: channel.name })
    )
    return ctx.response.redirect(`${adminUrl('/notifications')}#channel-${channel.name}`)
  }

  /** A test message to this channel only, whatever its rules say; the workers send it. */
  async sendTest(ctx: HttpContext) {
    const { params, session, response, auth, i18n } = ctx
    const channel = this.#channel(ctx, params.channel)
    const problem = await channel.problem()
    if (problem) {
      throw new OperatorError(
        i18n.t('admin.notifications.test_refused', {
          channel: channel.name,
          problem: problemText(i18n, problem),
        })
      )
    }
    const by = auth.use('web').user?.email ?? 'the console'
    const eventId = await this.#audit.change(
      (trx) =>
        raiseNotification(
          'notifications.test',
          { by },
          { only: { channel: channel.name }, force: true },
          trx
        ),
      (id) => ({
        action: 'notification.test',
        subjectType: 'notification_channel',
        subjectId: channel.name,
        after: { event_id: id },
      })
    )
    session.flash(
      'success',
      i18n.t('admin.notifications.test_queued', {
        channel: channel.name,
        event: String(eventId),
      })
    )
    return response.redirect(`${adminUrl('/notifications')}?channel=${channel.name}#deliveries`)
  }

  /** Clears a stopped target: the channel sends to it again from the next event on. */
  async resume({ params, session, response, i18n }: HttpContext) {
    const id = Number(params.id)
    const row = Number.isSafeInteger(id)
      ? await db.from('notification_targets').where('id', id).first()
      : null
    if (!row) throw new OperatorError(i18n.t('admin.notifications.not_stopped'))
    const target = shownTarget(row.target)
    await this.#audit.change(
      async (trx) => {
        const deleted = await trx.from('notification_targets').where('id', row.id).delete()
        if (Number(deleted) !== 1)
          throw new OperatorError(i18n.t('admin.notifications.resumed_meanwhile'))
      },
      () => ({
        action: 'notification.target_resumed',
        subjectType: 'notification_channel',
        subjectId: row.channel,
        before: {
          target,
          reason: shownError(row.reason, row.target),
          stopped_at: Number(row.stopped_at),
        },
        after: null,
      })
    )
    session.flash(
      'success',
      i18n.t('admin.notifications.resumed', { target, channel: row.channel })
    )
    return response.redirect(`${adminUrl('/notifications')}#channel-${row.channel}`)
  }

  #channel(ctx: HttpContext, name: string): NotificationChannel {
    const channel = notificationChannels.get(name)
    if (!channel) throw new AdminNotFound(ctx.i18n.t('admin.notifications.no_channel'))
    return channel
  }

  /**
   * Saves one form whole or not at all through settings.setMany (one
   * `setting.set` audit row per changed value). A secret left blank keeps
   * its stored value; its "clear" box empties it. A refused value is named
   * at its field and nothing is stored.
   */
  async #save(ctx: HttpContext, keys: string[], labels: (key: string) => string, title: string) {
    const { request, session, i18n } = ctx
    const body = request.body()
    const has = (name: string) => Object.prototype.hasOwnProperty.call(body, name)
    const raws: Record<string, string> = {}
    const errors: Record<string, string> = {}
    for (const key of keys) {
      const name = fieldName(key)
      const given = has(name) ? body[name] : undefined
      if (given !== undefined && given !== null && typeof given !== 'string') {
        errors[key] = 'must be text'
        continue
      }
      const text = given ?? ''
      if (settings.definition(key).secret) {
        const clear = has(clearName(key))
        if (clear && text !== '') errors[key] = 'type a new value or tick clear, not both'
        else if (clear) raws[key] = ''
        else if (text !== '') raws[key] = text
        continue
      }
      if (has(name)) raws[key] = text
    }
    try {
      if (Object.keys(errors).length > 0) throw new SettingsInputError(errors)
      const changed = await settings.setMany(raws)
      session.flash(
        'success',
        changed.length === 0
          ? i18n.t('admin.notifications.unchanged', { title })
          : i18n.t('admin.notifications.saved', { title, count: changed.length })
      )
    } catch (error) {
      if (!(error instanceof SettingsInputError)) throw error
      flashInputWithoutSecrets(ctx)
      const bag: Record<string, string[]> = {}
      for (const [key, message] of Object.entries(error.errors)) {
        const label = fieldWords(i18n, key, {
          label: labels(key),
          help: sentence(settings.definition(key).description),
        }).label
        bag[fieldName(key)] = [settingErrorText(i18n, label, message)]
      }
      session.flash('inputErrorsBag', bag)
      session.flash('error', i18n.t('admin.notifications.refused', { title }))
    }
  }
}
