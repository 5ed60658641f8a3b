import type { HttpContext } from '@adonisjs/core/http'
import vine from '@vinejs/vine'
import User, { ADMIN_ROLES } from '#models/user'
import hash from '@adonisjs/core/services/hash'
import adminUsers from '#services/operators/admin_users'
import { OperatorError } from '#support/cli/operator_error'
import { AdminNotFound } from '#admin/admin_errors'
import { adminUrl } from '#admin/admin_paths'

const newUser = vine.compile(
  vine.object({
    email: vine.string().trim().maxLength(254),
    role: vine.enum(ADMIN_ROLES),
  })
)
const roleForm = vine.compile(vine.object({ role: vine.enum(ADMIN_ROLES) }))
const passwordForm = vine.compile(vine.object({ password: vine.string().maxLength(256) }))

/**
 * Administrators of the console, through the same service as
 * `admin:create`, `admin:role`, `admin:2fa:reset`, `admin:disable` and
 * `admin:enable` (the last enabled admin cannot be demoted nor disabled,
 * nobody disables themself; every change audited). A new user's password is
 * generated and shown once, on the answer to the form.
 */
export default class UsersController {
  constructor(protected users = adminUsers) {}

  async index({ view }: HttpContext) {
    const users = await this.users.list()
    return view.render('admin/users/index', { users, roles: ADMIN_ROLES })
  }

  async create({ request, view }: HttpContext) {
    const input = await request.validateUsing(newUser)
    const { user, generatedPassword } = await this.users.create({
      email: input.email,
      role: input.role,
    })
    return view.render('admin/users/created', { user, password: generatedPassword })
  }

  async setRole({ params, request, session, response, i18n }: HttpContext) {
    const user = await this.#find(params.id, i18n)
    const { role } = await request.validateUsing(roleForm)
    await this.users.setRole(user.email, role)
    session.flash(
      'success',
      i18n.t('admin.users.flash.role_set', {
        email: user.email,
        role: i18n.t('admin.common.role.' + role),
      })
    )
    return response.redirect(adminUrl('/users'))
  }

  /** Needs the acting admin's own password again: an unattended session must not strip another account's second factor. */
  async resetTwoFactor({ params, request, auth, session, response, i18n }: HttpContext) {
    const user = await this.#find(params.id, i18n)
    const { password } = await request.validateUsing(passwordForm)
    if (!(await hash.use('scrypt').verify(auth.use('web').getUserOrFail().password, password))) {
      throw new OperatorError(i18n.t('admin.users.flash.wrong_password', { email: user.email }))
    }
    const { wasEnabled } = await this.users.reset2fa(user.email)
    session.flash(
      'success',
      i18n.t(wasEnabled ? 'admin.users.flash.reset' : 'admin.users.flash.reset_none', {
        email: user.email,
      })
    )
    return response.redirect(adminUrl('/users'))
  }

  /** The signed-in admin cannot disable itself, nor the last enabled admin (the service refuses both). */
  async disable({ params, auth, session, response, i18n }: HttpContext) {
    const user = await this.#find(params.id, i18n)
    const { changed } = await this.users.disable(user.email, {
      actingUserId: auth.use('web').getUserOrFail().id,
    })
    session.flash(
      'success',
      i18n.t(changed ? 'admin.users.flash.disabled' : 'admin.users.flash.already_disabled', {
        email: user.email,
      })
    )
    return response.redirect(adminUrl('/users'))
  }

  async enable({ params, session, response, i18n }: HttpContext) {
    const user = await this.#find(params.id, i18n)
    const { changed } = await this.users.enable(user.email)
    session.flash(
      'success',
      i18n.t(changed ? 'admin.users.flash.enabled' : 'admin.users.flash.already_enabled', {
        email: user.email,
      })
    )
    return response.redirect(adminUrl('/users'))
  }

  async #find(id: string, i18n: HttpContext['i18n']) {
    const user = /^\d+$/.test(id) ? await User.find(Number(id)) : null
    if (!user) throw new AdminNotFound(i18n.t('admin.users.flash.not_found'))
    return user
  }
}
