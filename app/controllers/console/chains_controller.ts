import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import vine from '@vinejs/vine'
import {
  ChainAdmin,
  budgetInput,
  optionsInput,
  type ChainChanges,
} from '#services/operators/chain_admin'
import { ChainOverview, type ChainSummary } from '#services/operators/chain_overview'
import { OperatorError } from '#support/operator_error'
import { redactUrl } from '#support/redaction'
import { ConsoleNotFound } from '#console/console_errors'
import { adminUrl, safeConsoleReturn } from '#console/console_paths'

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

/**
 * Chains: list with the scanner's state, the settings form, enable and
 * disable, and the connection test; all through ChainAdmin (the service of
 * `chain:set`), so every rule is the command's. The API key is never sent
 * to a page: the form shows whether one is set and its last characters,
 * and a blank field keeps it. RPC URLs are shown masked where they carry
 * a key; sent back masked they keep the stored URL (ChainAdmin).
 */
@inject()
export default class ChainsController {
  constructor(
    protected chains: ChainAdmin,
    protected overview: ChainOverview
  ) {}

  async index({ view }: HttpContext) {
    return view.render('console/chains/index', { chains: await this.overview.all() })
  }

  async show({ params, view, session }: HttpContext) {
    const chain = await this.#summary(params.network)
    // After a refusal the form shows what was sent, with keys masked like the stored URLs.
    const sent = session.flashMessages.get('rpc_urls')
    return view.render('console/chains/show', {
      chain,
      rpcUrlsText:
        typeof sent === 'string'
          ? lines(sent)
              .map((url) => redactUrl(url))
              .join('\n')
          : chain.rpcUrls.join('\n'),
      optionsText: Object.entries(chain.options)
        .map(([key, value]) => `${key}=${value}`)
        .join('\n'),
    })
  }

  async update({ params, request, session, response }: HttpContext) {
    const chain = await this.#summary(params.network)
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
      throw new OperatorError('Either type a new API key or tick "Remove the API key", not both')
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
    session.flash('success', `${saved.displayName} (${saved.network}) was saved.`)
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
  async testConnection({ params, session, response }: HttpContext) {
    const chain = await this.#summary(params.network)
    const result = await this.chains.testConnection(chain.network)
    session.flash('connectionTest', result)
    const failed = result.endpoints.filter((endpoint) => !endpoint.ok).length
    if (failed === 0) session.flash('success', `Every RPC endpoint of ${chain.network} answered.`)
    else
      session.flash(
        'error',
        `${failed} of ${result.endpoints.length} RPC endpoint(s) of ${chain.network} did not answer.`
      )
    return response.redirect(adminUrl(`/chains/${chain.network}`))
  }

  async #setEnabled({ params, session, response, request }: HttpContext, enabled: boolean) {
    const chain = await this.#summary(params.network)
    await this.chains.set(chain.network, { enabled })
    session.flash(
      'success',
      enabled
        ? `${chain.displayName} is enabled: offered to payers once it has a wallet and an enabled token.`
        : `${chain.displayName} is disabled: new orders on it are refused (10014) and it is no longer scanned.`
    )
    return response.redirect(
      safeConsoleReturn(request.input('_back')) ?? adminUrl(`/chains/${chain.network}`)
    )
  }

  async #summary(network: unknown): Promise<ChainSummary> {
    if (typeof network !== 'string' || !/^[a-z0-9-]{1,32}$/i.test(network))
      throw new ConsoleNotFound('No chain has this name.')
    try {
      return await this.overview.one(network)
    } catch (error) {
      if (error instanceof OperatorError)
        throw new ConsoleNotFound(`No chain is named "${network}".`)
      throw error
    }
  }
}
