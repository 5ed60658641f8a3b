import { textOr } from '#support/text/catalogue'
import type { HttpContext } from '@adonisjs/core/http'
import type { I18n } from '@adonisjs/i18n'
import vine, { errors as vineErrors } from '@vinejs/vine'
import chainAdmin, {
  ChainInputError,
  budgetInput,
  optionsInput,
  type ChainChanges,
  type ChainInput,
} from '#services/operators/chain_admin'
import chainRegistry from '#chains/chain_registry'
import pluginRegistry from '#plugin_host/plugin_registry'
import { pluginKeyPrefix } from '#plugin_host/plugin_resources'
import chainOverview, { type ChainSummary } from '#services/operators/chain_overview'
import { OperatorError } from '#support/cli/operator_error'
import { redactUrl } from '#support/http/redaction'
import { AdminNotFound } from '#admin/admin_errors'
import { refusalText } from '#admin/refusal_text'
import { adminUrl, safeAdminReturn } from '#admin/admin_paths'

/** Lines of a textarea, trimmed, blank ones dropped. */
function lines(text: string | undefined): string[] {
  return (text ?? '')
    .split(/\r\n|\r|\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
}

const chainForm = vine.compile(
  vine.object({
    display_name: vine.string().trim().maxLength(64),
    rpc_urls: vine.string().maxLength(25_000).optional(),
    api_key: vine.string().maxLength(500).optional(),
    clear_api_key: vine.boolean().optional(),
    confirmations: vine.number().withoutDecimals(),
    scan_interval: vine.number().withoutDecimals(),
    block_time: vine.number(),
    requests_per_second: vine.string().trim().maxLength(20).optional(),
    requests_per_day: vine.string().trim().maxLength(20).optional(),
    explorer_tx_url: vine.string().trim().maxLength(500).optional(),
    options: vine.string().maxLength(5_000).optional(),
  })
)

const networkForm = vine.compile(
  vine.object({
    network: vine.string().trim().maxLength(32),
    family: vine.string().trim().maxLength(64),
    display_name: vine.string().trim().maxLength(64),
    rpc_url: vine.string().trim().maxLength(2000),
    confirmations: vine.number().withoutDecimals(),
    block_time: vine.number(),
    // Blank (the block time) is allowed: read below, not by vine (which takes "" for 0).
    scan_interval: vine.string().trim().maxLength(20).optional(),
    explorer_tx_url: vine.string().trim().maxLength(500).optional(),
  })
)

/** The add-network form's field of an option of a family (one set of fields per family). */
export function networkOptionField(family: string, option: string) {
  return `option_${family}_${option}`
}

/** The add-network form's field of each input ChainAdmin.add may refuse. */
const NETWORK_FIELDS: Partial<Record<ChainInput, string>> = {
  network: 'network',
  family: 'family',
  displayName: 'display_name',
  rpcUrls: 'rpc_url',
  confirmations: 'confirmations',
  blockTimeSeconds: 'block_time',
  scanIntervalSeconds: 'scan_interval',
  explorerTxUrl: 'explorer_tx_url',
}

/**
 * The texts of the chain pages a family's plugin may bring
 * (`lang/<locale>/admin.json`, keyed `plugins.<name>.admin.<key>`):
 * - `api_key_help`, `options_help`: the chain page's help of the API key
 *   and the options fields (else the general texts of resources/lang/<locale>/admin/chains.json);
 * - `network_options.<option>.label` / `.help`: the add-network form's
 *   field of a family's option (else the family's own words);
 * - `description`, `families.<family>.address_format`: the plugins page's;
 * - `refusals.<key>`: its reasons for a refused address, contract or
 *   option (`pluginReason`), inside the console's refusals.
 */
export const FAMILY_CONSOLE_TEXTS = [
  'api_key_help',
  'options_help',
  'network_options.',
  // The plugins page's (plugins_controller.ts).
  'description',
  'families.',
  // Its reasons for a refused address, contract or option (pluginReason, app/admin/refusal_text.ts).
  'refusals.',
] as const

/** A text of the family's plugin in the admin's language, or null when it brings none. */
export function familyText(i18n: I18n, family: string, key: string): string | null {
  const plugin = pluginRegistry.pluginOfFamily(family)
  if (!plugin) return null
  const full = `${pluginKeyPrefix(plugin)}admin.${key}`
  return textOr(i18n, full, null)
}

/** The families a network can be added to from the console: those that can test an endpoint. */
function addableFamilies(i18n: I18n) {
  return chainRegistry
    .names()
    .map((name) => chainRegistry.family(name))
    .filter((family) => typeof family.head === 'function')
    .map((family) => ({
      name: family.name,
      options: (family.networkOptions ?? []).map((option) => ({
        ...option,
        label:
          familyText(i18n, family.name, `network_options.${option.name}.label`) ?? option.label,
        help: familyText(i18n, family.name, `network_options.${option.name}.help`) ?? option.help,
        field: networkOptionField(family.name, option.name),
      })),
    }))
}

/**
 * Chains: list with the scanner's state, the settings form, enable and
 * disable, and the connection test; all through ChainAdmin (the service of
 * `chain:set`), so every rule is the command's. The API key is never sent
 * to a page: the form shows whether one is set and its last characters,
 * and a blank field keeps it. RPC URLs are shown masked where they carry
 * a key; sent back masked they keep the stored URL (ChainAdmin).
 */
export default class ChainsController {
  constructor(
    protected chains = chainAdmin,
    protected overview = chainOverview
  ) {}

  async index({ view, session, i18n }: HttpContext) {
    const chains = await this.overview.all()
    // After a refusal the URL sent is shown again, its key masked (as the chain page does).
    const sent = session.flashMessages.get('rpc_url')
    return view.render('admin/chains/index', {
      chains,
      // The family of most networks first: the one chosen unless told.
      families: addableFamilies(i18n)
        .map((family) => ({
          ...family,
          networks: chains.filter((chain) => chain.family === family.name).map((c) => c.network),
        }))
        .sort((a, b) => b.networks.length - a.networks.length || a.name.localeCompare(b.name)),
      sentRpcUrl: typeof sent === 'string' ? redactUrl(sent.trim()) : '',
    })
  }

  /**
   * Adds a network of an installed family (the add-network form of the
   * chains page) through ChainAdmin.add: its RPC URL is tested first (the
   * head, and the family's own check of the network given, such as a chain
   * id), and a refusal is shown at the field it concerns with nothing written.
   */
  async create(ctx: HttpContext) {
    const { request, session, response } = ctx
    const input = await request.validateUsing(networkForm)
    const family = chainRegistry.find(input.family)
    const options: Record<string, string> = {}
    for (const option of family?.networkOptions ?? []) {
      const value = request.input(networkOptionField(input.family, option.name))
      options[option.name] = typeof value === 'string' ? value.trim() : ''
    }
    const changes: ChainChanges & { family: string } = {
      family: input.family,
      displayName: input.display_name,
      rpcUrls: [input.rpc_url],
      confirmations: input.confirmations,
      blockTimeSeconds: input.block_time,
      // Blank: polled at the block time, as the seeded chains are (whole seconds, at least 1).
      scanIntervalSeconds: input.scan_interval
        ? Number(input.scan_interval)
        : Math.max(1, Math.round(input.block_time)),
      explorerTxUrl: input.explorer_tx_url ?? '',
      options,
    }
    let saved
    try {
      saved = await this.chains.add(input.network, changes)
    } catch (error) {
      if (!(error instanceof ChainInputError)) throw error
      const field = error.input.startsWith('option:')
        ? networkOptionField(input.family, error.input.slice('option:'.length))
        : NETWORK_FIELDS[error.input]
      if (!field) throw error
      // Shown at its field by the console's error page handling (admin_errors.ts).
      throw new vineErrors.E_VALIDATION_ERROR([
        { field, message: refusalText(ctx.i18n, error), rule: 'chain' },
      ])
    }
    session.flash(
      'success',
      ctx.i18n.t('admin.chains.flash.added', { chain: saved.displayName, network: saved.network })
    )
    return response.redirect(adminUrl(`/chains/${saved.network}`))
  }

  async show({ params, view, session, i18n }: HttpContext) {
    const chain = await this.#summary(i18n, params.network)
    // After a refusal the form shows what was sent, with keys masked like the stored URLs.
    const sent = session.flashMessages.get('rpc_urls')
    return view.render('admin/chains/show', {
      chain,
      rpcUrlsText:
        typeof sent === 'string'
          ? lines(sent)
              .map((url) => redactUrl(url))
              .join('\n')
          : chain.rpcUrls.join('\n'),
      // The help of the fields whose use differs by family: its plugin's words, else the general ones.
      familyTexts: {
        apiKeyHelp:
          familyText(i18n, chain.family, 'api_key_help') ??
          i18n.t('admin.chains.show.api_key_help'),
        optionsHelp:
          familyText(i18n, chain.family, 'options_help') ??
          i18n.t('admin.chains.show.options_help'),
      },
      optionsText: Object.entries(chain.options)
        .map(([key, value]) => `${key}=${value}`)
        .join('\n'),
    })
  }

  async update({ params, request, session, response, i18n }: HttpContext) {
    const chain = await this.#summary(i18n, params.network)
    const input = await request.validateUsing(chainForm)
    const changes: ChainChanges = {
      displayName: input.display_name,
      rpcUrls: lines(input.rpc_urls),
      confirmations: input.confirmations,
      scanIntervalSeconds: input.scan_interval,
      blockTimeSeconds: input.block_time,
      requestsPerSecond: budgetInput(input.requests_per_second ?? '', 'Requests per second'),
      requestsPerDay: budgetInput(input.requests_per_day ?? '', 'Requests per day'),
      explorerTxUrl: input.explorer_tx_url ?? '',
    }
    // A blank key keeps the stored one; "remove" clears it.
    const apiKey = (input.api_key ?? '').trim()
    if (input.clear_api_key && apiKey !== '') {
      throw new OperatorError(i18n.t('admin.chains.error.key_and_clear'))
    }
    if (input.clear_api_key) changes.apiKey = ''
    else if (apiKey !== '') changes.apiKey = apiKey
    // The options as listed: a line removed removes that option.
    const options = optionsInput(lines(input.options), 'Options')
    for (const key of Object.keys(chain.options)) if (!(key in options)) options[key] = ''
    const changed = Object.entries(options).filter(
      ([key, value]) => String(chain.options[key] ?? '') !== value
    )
    if (changed.length > 0) changes.options = Object.fromEntries(changed)

    const saved = await this.chains.set(chain.network, changes)
    session.flash(
      'success',
      i18n.t('admin.chains.flash.saved', { chain: saved.displayName, network: saved.network })
    )
    return response.redirect(adminUrl(`/chains/${chain.network}`))
  }

  async enable(ctx: HttpContext) {
    return this.#setEnabled(ctx, true)
  }

  async disable(ctx: HttpContext) {
    return this.#setEnabled(ctx, false)
  }

  /**
   * Asks every endpoint for the head now and shows the answers on the
   * chain's page (flashed: a reload does not ask again).
   */
  async testConnection({ params, session, response, i18n }: HttpContext) {
    const chain = await this.#summary(i18n, params.network)
    const result = await this.chains.testConnection(chain.network)
    session.flash('connectionTest', result)
    const failed = result.endpoints.filter((endpoint) => !endpoint.ok).length
    if (failed === 0)
      session.flash(
        'success',
        i18n.t('admin.chains.flash.all_answered', { network: chain.network })
      )
    else
      session.flash(
        'error',
        i18n.t('admin.chains.flash.some_failed', {
          failed,
          total: result.endpoints.length,
          network: chain.network,
        })
      )
    return response.redirect(adminUrl(`/chains/${chain.network}`))
  }

  async #setEnabled({ params, session, response, request, i18n }: HttpContext, enabled: boolean) {
    const chain = await this.#summary(i18n, params.network)
    await this.chains.set(chain.network, { enabled })
    session.flash(
      'success',
      i18n.t(enabled ? 'admin.chains.flash.enabled' : 'admin.chains.flash.disabled', {
        chain: chain.displayName,
      })
    )
    return response.redirect(
      safeAdminReturn(request.input('_back')) ?? adminUrl(`/chains/${chain.network}`)
    )
  }

  async #summary(i18n: I18n, network: unknown): Promise<ChainSummary> {
    if (typeof network !== 'string' || !/^[a-z0-9-]{1,32}$/i.test(network))
      throw new AdminNotFound(i18n.t('admin.chains.error.no_chain'))
    try {
      return await this.overview.one(network)
    } catch (error) {
      if (error instanceof OperatorError)
        throw new AdminNotFound(i18n.t('admin.chains.error.no_chain_named', { network }))
      throw error
    }
  }
}
