import type { HttpContext } from '@adonisjs/core/http'
import vine from '@vinejs/vine'
import { SettingsInputError } from '#settings/settings_service'
import settingsGroups, {
  UnknownSettingsGroupError,
  localizedPage,
  localizedSummaries,
  settingErrorText,
  type SettingsGroupPage,
} from '#services/admin/settings_groups'
import { publicConfig } from '#services/public_config'
import { siteLook } from '#cashier/site_look'
import { AdminNotFound } from '#admin/admin_errors'
import { adminUrl } from '#admin/admin_paths'
import { flashInputWithoutSecrets } from '#admin/admin_session'
import { OperatorError } from '#support/cli/operator_error'

/** A setting's form field: dots become `__` (a dotted name reads as a path in flash messages). */
export function settingFieldName(key: string): string {
  return key.replace(/\./g, '__')
}

const fixedRate = vine.compile(
  vine.object({
    token: vine.string().trim().maxLength(16),
    fiat: vine.string().trim().maxLength(10),
    rate: vine.string().trim().maxLength(40),
  })
)

/**
 * The settings pages, one per group (app/services/admin/settings_groups.ts),
 * saved whole or not at all through the settings service (the parsing and
 * audit of `settings:set`); fixed rates through RateAdmin (`rate:set`).
 */
export default class SettingsController {
  constructor(protected groups = settingsGroups) {}

  async index({ response }: HttpContext) {
    return response.redirect(adminUrl('/settings/site'))
  }

  async show(ctx: HttpContext) {
    const { params, view } = ctx
    const page = localizedPage(await this.#page(ctx, params.group), ctx.i18n)
    const summaries = localizedSummaries(await this.groups.summaries(), ctx.i18n)
    const data: Record<string, unknown> = { page, summaries, fieldName: settingFieldName }
    if (page.group.id === 'rates') data.rates = await this.groups.fixedRates()
    if (page.group.id === 'site') {
      const { site } = await publicConfig()
      data.preview = siteLook(site)
    }
    return view.render('admin/settings/show', data)
  }

  async save(ctx: HttpContext) {
    const { params, request, session, response } = ctx
    const page = localizedPage(await this.#page(ctx, params.group), ctx.i18n)
    const back = adminUrl(`/settings/${page.group.id}`)
    // The service refuses it too (in English, as `settings:set` would): said here in the admin's words.
    if (page.turnedOffPlugin) {
      throw new OperatorError(
        ctx.i18n.t('admin.settings.plugin_off_refused', { plugin: page.turnedOffPlugin })
      )
    }
    const body = request.body()
    const values: Record<string, string | null> = {}
    for (const field of page.fields) {
      const name = settingFieldName(field.key)
      if (Object.prototype.hasOwnProperty.call(body, name)) values[field.key] = body[name]
    }
    const cleared = ([] as unknown[]).concat(body.clear ?? [])
    const clear = page.fields
      .filter((field) => cleared.includes(settingFieldName(field.key)))
      .map((field) => field.key)
    try {
      const changed = await this.groups.save(page.group.id, { values, clear })
      session.flash(
        'success',
        changed.length === 0
          ? ctx.i18n.t('admin.settings.unchanged')
          : ctx.i18n.t('admin.settings.saved', {
              group: page.group.title,
              count: changed.length,
            })
      )
    } catch (error) {
      if (!(error instanceof SettingsInputError)) throw error
      flashInputWithoutSecrets(ctx)
      const bag: Record<string, string[]> = {}
      const labels = new Map(page.fields.map((field) => [field.key, field.label]))
      for (const [key, message] of Object.entries(error.errors)) {
        const label = labels.get(key) ?? page.group.labels[key] ?? key
        bag[settingFieldName(key)] = [settingErrorText(ctx.i18n, label, message)]
      }
      session.flash('inputErrorsBag', bag)
      session.flash('error', ctx.i18n.t('admin.settings.refused'))
    }
    return response.redirect(back)
  }

  async setRate({ request, session, response, i18n }: HttpContext) {
    const input = await request.validateUsing(fixedRate)
    const rate = await this.groups.setFixedRate(input.token, input.fiat, input.rate)
    session.flash(
      'success',
      i18n.t('admin.settings.fixed.saved', {
        token: rate.token,
        rate: rate.rate,
        fiat: rate.fiat,
      })
    )
    return response.redirect(adminUrl('/settings/rates'))
  }

  async #page(ctx: HttpContext, group: string): Promise<SettingsGroupPage> {
    try {
      return await this.groups.page(group)
    } catch (error) {
      if (error instanceof UnknownSettingsGroupError)
        throw new AdminNotFound(ctx.i18n.t('admin.settings.not_found'))
      throw error
    }
  }
}
