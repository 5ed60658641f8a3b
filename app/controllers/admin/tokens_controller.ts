import type { HttpContext } from '@adonisjs/core/http'
import type { I18n } from '@adonisjs/i18n'
import vine from '@vinejs/vine'
import Token from '#models/token'
import chainAdmin, { type TokenChanges } from '#services/operators/chain_admin'
import chainOverview, { tokenSummary } from '#services/operators/chain_overview'
import { OperatorError } from '#support/cli/operator_error'
import { AdminNotFound } from '#admin/admin_errors'
import { adminUrl } from '#admin/admin_paths'

const tokenFields = {
  contract: vine.string().trim().maxLength(200).optional(),
  native: vine.boolean().optional(),
  decimals: vine.number().withoutDecimals(),
  precision: vine.number().withoutDecimals(),
}
const newToken = vine.compile(
  vine.object({ symbol: vine.string().trim().maxLength(16), ...tokenFields })
)
const tokenForm = vine.compile(vine.object(tokenFields))

/**
 * Tokens of a chain through ChainAdmin.setToken (the service of
 * `token:set`): the contract is checked and normalised by the chain's
 * family, decimals and amount precision by the service's rules.
 */
export default class TokensController {
  constructor(
    protected chains = chainAdmin,
    protected overview = chainOverview
  ) {}

  async show({ params, view, i18n }: HttpContext) {
    const token = await this.#token(i18n, params.network, params.symbol)
    const chain = await this.overview.one(token.network)
    return view.render('admin/chains/token', { chain, token: tokenSummary(token) })
  }

  async create({ params, request, session, response, i18n }: HttpContext) {
    const chain = await this.#chain(i18n, params.network)
    const input = await request.validateUsing(newToken)
    const token = await this.chains.addToken(
      chain.network,
      input.symbol,
      this.#changes(i18n, input)
    )
    session.flash(
      'success',
      i18n.t('admin.chains.flash.token_added', {
        symbol: token.symbol,
        network: chain.network,
        contract: token.contract ?? i18n.t('admin.chains.show.native_coin'),
      })
    )
    return response.redirect(adminUrl(`/chains/${chain.network}`))
  }

  async update({ params, request, session, response, i18n }: HttpContext) {
    const token = await this.#token(i18n, params.network, params.symbol)
    const input = await request.validateUsing(tokenForm)
    const saved = await this.chains.setToken(
      token.network,
      token.symbol,
      this.#changes(i18n, input)
    )
    session.flash(
      'success',
      i18n.t('admin.chains.flash.token_saved', {
        symbol: saved.symbol,
        network: saved.network,
        contract: saved.contract ?? i18n.t('admin.chains.show.native_coin'),
      })
    )
    return response.redirect(adminUrl(`/chains/${saved.network}`))
  }

  async enable(ctx: HttpContext) {
    return this.#setEnabled(ctx, true)
  }

  async disable(ctx: HttpContext) {
    return this.#setEnabled(ctx, false)
  }

  /** The form's contract or "native coin": one of the two, as `token:set` asks. */
  #changes(
    i18n: I18n,
    input: {
      contract?: string
      native?: boolean
      decimals: number
      precision: number
    }
  ): TokenChanges {
    const contract = input.contract ?? ''
    if (input.native && contract !== '')
      throw new OperatorError(i18n.t('admin.chains.error.contract_and_native'))
    if (!input.native && contract === '')
      throw new OperatorError(i18n.t('admin.chains.error.contract_or_native'))
    return {
      ...(input.native ? { native: true } : { contract }),
      decimals: input.decimals,
      precision: input.precision,
    }
  }

  async #setEnabled({ params, session, response, i18n }: HttpContext, enabled: boolean) {
    const token = await this.#token(i18n, params.network, params.symbol)
    await this.chains.setToken(token.network, token.symbol, { enabled })
    session.flash(
      'success',
      i18n.t(enabled ? 'admin.chains.flash.token_enabled' : 'admin.chains.flash.token_disabled', {
        symbol: token.symbol,
        network: token.network,
      })
    )
    return response.redirect(adminUrl(`/chains/${token.network}`))
  }

  async #chain(i18n: I18n, network: unknown) {
    try {
      if (typeof network !== 'string') throw new OperatorError('no network')
      return await this.chains.find(network)
    } catch (error) {
      if (error instanceof OperatorError)
        throw new AdminNotFound(i18n.t('admin.chains.error.no_chain'))
      throw error
    }
  }

  async #token(i18n: I18n, network: unknown, symbol: unknown) {
    const chain = await this.#chain(i18n, network)
    const token =
      typeof symbol === 'string'
        ? await Token.query()
            .where('network', chain.network)
            .where('symbol', symbol.toUpperCase())
            .first()
        : null
    if (!token)
      throw new AdminNotFound(i18n.t('admin.chains.error.no_token', { network: chain.network }))
    return token
  }
}
