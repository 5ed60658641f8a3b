import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import vine from '@vinejs/vine'
import Token from '#models/token'
import { ChainAdmin, type TokenChanges } from '#services/operators/chain_admin'
import { ChainOverview, tokenSummary } from '#services/operators/chain_overview'
import { OperatorError } from '#support/operator_error'
import { ConsoleNotFound } from '#console/console_errors'
import { adminUrl } from '#console/console_paths'

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
@inject()
export default class TokensController {
  constructor(
    protected chains: ChainAdmin,
    protected overview: ChainOverview
  ) {}

  async show({ params, view }: HttpContext) {
    const token = await this.#token(params.network, params.symbol)
    const chain = await this.overview.one(token.network)
    return view.render('console/chains/token', { chain, token: tokenSummary(token) })
  }

  async create({ params, request, session, response }: HttpContext) {
    const chain = await this.#chain(params.network)
    const input = await request.validateUsing(newToken)
    const token = await this.chains.addToken(chain.network, input.symbol, this.#changes(input))
    session.flash(
      'success',
      `${token.symbol} was added to ${chain.network} (${token.contract ?? 'native coin'}).`
    )
    return response.redirect(adminUrl(`/chains/${chain.network}`))
  }

  async update({ params, request, session, response }: HttpContext) {
    const token = await this.#token(params.network, params.symbol)
    const input = await request.validateUsing(tokenForm)
    const saved = await this.chains.setToken(token.network, token.symbol, this.#changes(input))
    session.flash(
      'success',
      `${saved.symbol} on ${saved.network} was saved (${saved.contract ?? 'native coin'}).`
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
  #changes(input: {
    contract?: string
    native?: boolean
    decimals: number
    precision: number
  }): TokenChanges {
    const contract = input.contract ?? ''
    if (input.native && contract !== '')
      throw new OperatorError('Give either a contract or "native coin", not both')
    if (!input.native && contract === '')
      throw new OperatorError('Give the token contract, or tick "native coin"')
    return {
      ...(input.native ? { native: true } : { contract }),
      decimals: input.decimals,
      precision: input.precision,
    }
  }

  async #setEnabled({ params, session, response }: HttpContext, enabled: boolean) {
    const token = await this.#token(params.network, params.symbol)
    await this.chains.setToken(token.network, token.symbol, { enabled })
    session.flash(
      'success',
      enabled
        ? `${token.symbol} on ${token.network} is enabled: payers can choose it.`
        : `${token.symbol} on ${token.network} is disabled: new orders cannot use it.`
    )
    return response.redirect(adminUrl(`/chains/${token.network}`))
  }

  async #chain(network: unknown) {
    try {
      if (typeof network !== 'string') throw new OperatorError('no network')
      return await this.chains.find(network)
    } catch (error) {
      if (error instanceof OperatorError) throw new ConsoleNotFound('No chain has this name.')
      throw error
    }
  }

  async #token(network: unknown, symbol: unknown) {
    const chain = await this.#chain(network)
    const token =
      typeof symbol === 'string'
        ? await Token.query()
            .where('network', chain.network)
            .where('symbol', symbol.toUpperCase())
            .first()
        : null
    if (!token) throw new ConsoleNotFound(`${chain.network} has no token of this symbol.`)
    return token
  }
}
