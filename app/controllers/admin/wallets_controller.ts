import type { HttpContext } from '@adonisjs/core/http'
import type { I18n } from '@adonisjs/i18n'
import vine from '@vinejs/vine'
import Chain from '#models/chain'
import walletAdmin, { WalletAdmin, type WalletFilters } from '#services/operators/wallet_admin'
import { OperatorError } from '#support/cli/operator_error'
import { AdminNotFound } from '#admin/admin_errors'
import { keyedText } from '#admin/refusal_text'
import { adminUrl, safeAdminReturn } from '#admin/admin_paths'

const newWallet = vine.compile(
  vine.object({
    network: vine.string().trim().maxLength(32),
    address: vine.string().trim().maxLength(200),
    note: vine.string().trim().maxLength(255).optional(),
  })
)
const importForm = vine.compile(
  vine.object({
    text: vine.string().maxLength(200_000),
    network: vine.string().trim().maxLength(32).optional(),
  })
)

const PAGE_SIZE = 50

/**
 * Receiving wallets through WalletAdmin (the service of `wallet:add`,
 * `wallet:set`, `wallet:remove`, `wallet:import`): addresses checked and
 * normalised by the network's family, removal refused while amounts are
 * reserved on the wallet (the console has no --force).
 */
export default class WalletsController {
  constructor(protected wallets = walletAdmin) {}

  async index({ request, view, i18n }: HttpContext) {
    const state = String(request.input('state', ''))
    const filters: WalletFilters = {
      network: String(request.input('network', '')).trim() || undefined,
      enabled: state === 'enabled' ? true : state === 'disabled' ? false : undefined,
      search: String(request.input('q', '')).trim().slice(0, 128) || undefined,
    }
    const after = request.input('after')
    const page = await this.wallets.page(filters, {
      after: typeof after === 'string' ? after : null,
      limit: PAGE_SIZE,
    })
    const usage = await this.wallets.usage(page.rows)
    const query = (extra: Record<string, string>) => {
      const params = new URLSearchParams()
      if (filters.network) params.set('network', filters.network)
      if (state === 'enabled' || state === 'disabled') params.set('state', state)
      if (filters.search) params.set('q', filters.search)
      for (const [key, value] of Object.entries(extra)) params.set(key, value)
      const text = params.toString()
      return adminUrl(`/wallets${text ? `?${text}` : ''}`)
    }
    return view.render('admin/wallets/index', {
      rows: page.rows.map((wallet) => ({ wallet, usage: WalletAdmin.usageOf(usage, wallet) })),
      networks: await this.#networks(i18n),
      filters: { network: filters.network ?? '', state, q: filters.search ?? '' },
      filtered: Boolean(filters.network || filters.search || filters.enabled !== undefined),
      firstUrl: after ? query({}) : null,
      nextUrl: page.next ? query({ after: page.next }) : null,
    })
  }

  async create({ request, session, response, i18n }: HttpContext) {
    const input = await request.validateUsing(newWallet)
    const wallet = await this.wallets.add(input.network, input.address, input.note ?? '')
    const canonical = wallet.address !== input.address
    session.flash(
      'success',
      i18n.t(canonical ? 'admin.wallets.flash.added_canonical' : 'admin.wallets.flash.added', {
        network: wallet.network,
        address: wallet.address,
      })
    )
    return response.redirect(adminUrl(`/wallets?network=${encodeURIComponent(wallet.network)}`))
  }

  async showImport({ view, i18n }: HttpContext) {
    return view.render('admin/wallets/import', {
      networks: await this.#networks(i18n),
      report: null,
    })
  }

  /** The report is the answer to the form (no redirect): it may list a thousand lines. */
  async import({ request, view, i18n }: HttpContext) {
    const input = await request.validateUsing(importForm)
    const report = await this.wallets.importBatch(input.text, {
      defaultNetwork: input.network || undefined,
    })
    // The lines' reasons in the admin's language.
    for (const line of report.lines)
      if (line.reason !== null) line.reason = keyedText(i18n, line.refusal, line.reason)
    return view.render('admin/wallets/import', {
      networks: await this.#networks(i18n),
      report,
      defaultNetwork: input.network ?? '',
    })
  }

  async enable(ctx: HttpContext) {
    return this.#setEnabled(ctx, true)
  }

  async disable(ctx: HttpContext) {
    return this.#setEnabled(ctx, false)
  }

  async remove({ params, session, response, request, i18n }: HttpContext) {
    const wallet = await this.#wallet(params.id, i18n)
    await this.wallets.remove(wallet.network, wallet.address)
    session.flash(
      'success',
      i18n.t('admin.wallets.flash.removed', { address: wallet.address, network: wallet.network })
    )
    return response.redirect(this.#back(request.input('_back')))
  }

  async #setEnabled({ params, session, response, request, i18n }: HttpContext, enabled: boolean) {
    const wallet = await this.#wallet(params.id, i18n)
    await this.wallets.update(wallet.network, wallet.address, { enabled })
    session.flash(
      'success',
      i18n.t(enabled ? 'admin.wallets.flash.enabled' : 'admin.wallets.flash.disabled', {
        address: wallet.address,
        network: wallet.network,
      })
    )
    return response.redirect(this.#back(request.input('_back')))
  }

  /** Back to the list as it was filtered (the form's page), else the list. */
  #back(value: unknown) {
    return safeAdminReturn(value) ?? adminUrl('/wallets')
  }

  async #wallet(id: unknown, i18n: I18n) {
    try {
      if (typeof id !== 'string' || !/^\d{1,15}$/.test(id)) throw new OperatorError('bad id')
      return await this.wallets.findById(Number(id))
    } catch (error) {
      if (error instanceof OperatorError)
        throw new AdminNotFound(i18n.t('admin.wallets.flash.not_found'))
      throw error
    }
  }

  async #networks(i18n: I18n) {
    const chains = await Chain.query().orderBy('sort_order').orderBy('id')
    return chains.map((chain) => ({
      value: chain.network,
      label: i18n.t(
        chain.enabled ? 'admin.wallets.network_option' : 'admin.wallets.network_option_disabled',
        { name: chain.displayName, network: chain.network }
      ),
    }))
  }
}
