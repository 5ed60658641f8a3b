import type { HttpContext } from '@adonisjs/core/http'
import vine from '@vinejs/vine'
import User from '#models/user'
import adminUsers, { MIN_PASSWORD_LENGTH } from '#services/operators/admin_users'
import twoFactor from '#services/operators/two_factor'
import settings from '#settings/settings_service'
import { qrSvg } from '#cashier/qr_svg'
import { adminUrl } from '#admin/admin_paths'
import { startAdminSession } from '#admin/admin_session'
import { mustEnrolTwoFactor } from '#middleware/admin_auth_middleware'
import {
  ADMIN_LOCALES,
  ADMIN_LOCALE_NAMES,
  applyAdminLocale,
  isAdminLocale,
} from '#admin/admin_locale'

const passwordChange = vine.compile(
  vine.object({
    current_password: vine.string().maxLength(256),
    new_password: vine
      .string()
      .minLength(MIN_PASSWORD_LENGTH)
      .maxLength(256)
      .confirmed({ confirmationField: 'new_password_confirmation' }),
  })
)
const codeForm = vine.compile(
  vine.object({
    code: vine
      .string()
      .trim()
      .regex(/^\d{6}$/),
  })
)
const passwordForm = vine.compile(vine.object({ password: vine.string().maxLength(256) }))

/** The signed-in user's own account: password and two-factor sign-in (open to viewers too). */
export default class AccountController {
  constructor(
    protected users = adminUsers,
    protected twoFactorAuth = twoFactor
  ) {}

  async show({ view, auth }: HttpContext) {
    const user = auth.use('web').getUserOrFail()
    return view.render('admin/account/show', {
      user,
      minPasswordLength: MIN_PASSWORD_LENGTH,
      localeNames: ADMIN_LOCALE_NAMES,
      localeChoices: ADMIN_LOCALES.map((code) => ({
        value: code,
        label: ADMIN_LOCALE_NAMES[code],
      })),
      twoFactorOn: user.totpEnabledAt !== null,
      enrolmentPending: user.totpEnabledAt === null && user.totpSecret !== null,
      recoveryCodesLeft: this.twoFactorAuth.remainingRecoveryCodes(user),
      twoFactorRequired: await mustEnrolTwoFactor(user),
    })
  }

  async changePassword(ctx: HttpContext) {
    const user = ctx.auth.use('web').getUserOrFail()
    const input = await ctx.request.validateUsing(passwordChange)
    await this.users.changeOwnPassword(user, input.current_password, input.new_password)
    // This session stays signed in; every other one ends (password_changed_at).
    await startAdminSession(ctx, (await User.find(user.id))!)
    ctx.session.flash('success', ctx.i18n.t('admin.account.password.changed'))
    return ctx.response.redirect(adminUrl('/account'))
  }

  /**
   * The console's language for this admin (`locale`: en, zh-CN), or the
   * browser's again (`browser`). A preference of one's own: not audited.
   */
  async changeLocale(ctx: HttpContext) {
    const { auth, request, response, session } = ctx
    const user = auth.use('web').getUserOrFail()
    const asked = String(request.input('locale', ''))
    if (asked !== 'browser' && !isAdminLocale(asked)) {
      session.flash('error', ctx.i18n.t('admin.account.locale_refused'))
      return response.redirect(adminUrl('/account'))
    }
    user.locale = asked === 'browser' ? null : asked
    await user.save()
    const i18n = applyAdminLocale(ctx, user.locale)
    session.flash('success', i18n.t('admin.account.locale_saved'))
    return response.redirect(adminUrl('/account'))
  }

  async startTwoFactor({ auth, request, response }: HttpContext) {
    const user = auth.use('web').getUserOrFail()
    const { password } = await request.validateUsing(passwordForm)
    await this.twoFactorAuth.begin(user, await this.#issuer(), { password })
    return response.redirect(adminUrl('/account/2fa'))
  }

  async showEnrolment({ auth, view, response, i18n }: HttpContext) {
    const user = auth.use('web').getUserOrFail()
    const pending = this.twoFactorAuth.pendingEnrolment(user, await this.#issuer())
    if (!pending) return response.redirect(adminUrl('/account'))
    return view.render('admin/account/two_factor_enrol', {
      secret: pending.secret.replace(/(.{4})/g, '$1 ').trim(),
      qr: await qrSvg(pending.uri, i18n.t('admin.account.enrol.qr_label')),
    })
  }

  /** Turns 2FA on; the recovery codes are on this response only (never stored in clear, never shown again). */
  async confirmTwoFactor({ auth, request, view, response }: HttpContext) {
    const user = auth.use('web').getUserOrFail()
    const { code } = await request.validateUsing(codeForm)
    const codes = await this.twoFactorAuth.confirm(user, code)
    response.header('cache-control', 'no-store')
    return view.render('admin/account/recovery_codes', { codes })
  }

  async disableTwoFactor(ctx: HttpContext) {
    const user = ctx.auth.use('web').getUserOrFail()
    const { password } = await ctx.request.validateUsing(passwordForm)
    await this.twoFactorAuth.disable(user, password)
    ctx.session.flash('success', ctx.i18n.t('admin.account.two_factor.turned_off'))
    return ctx.response.redirect(adminUrl('/account'))
  }

  async #issuer() {
    const name = String(await settings.get('site.cashier_name')).trim()
    return name === '' ? 'Crypto Gateway' : `${name} console`
  }
}
