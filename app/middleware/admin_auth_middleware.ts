import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { actingAs } from '#services/audit/audit_context'
import { adminUrl } from '#admin/admin_paths'
import { ABSOLUTE_SESSION_MS, SESSION_KEYS, idleTimeoutMs } from '#admin/admin_session'
import { AdminForbidden } from '#admin/admin_errors'
import type User from '#models/user'
import settings from '#settings/settings_service'
import { applyAdminLocale } from '#admin/admin_locale'

export type AdminAuthOptions = {
  /**
   * Routes of the signed-in user's own account (password, two-factor, sign
   * out): open to viewers too. Everywhere else a viewer may only read.
   */
  ownAccount?: boolean
  /**
   * Routes of the two-factor set-up (and sign-out): the only ones open to
   * an admin without 2FA while console.require_2fa_admins is on.
   */
  enrolment?: boolean
}

const READS = new Set(['GET', 'HEAD'])

export const TWO_FACTOR_REQUIRED =
  'Administrators must use two-factor sign-in: set it up on your account page to use the console.'

/** An admin without 2FA while the setting asks every admin for it. */
export async function mustEnrolTwoFactor(user: User): Promise<boolean> {
  return (
    user.role === 'admin' &&
    user.totpEnabledAt === null &&
    (await settings.get('console.require_2fa_admins')) === true
  )
}

/**
 * The console's gate, on every console route but the sign-in pages:
 * - a session must be signed in, not idle longer than ADMIN_IDLE_MINUTES,
 *   not older than 12 hours since its sign-in (ABSOLUTE_SESSION_MS),
 *   opened after the user's last password change (a changed password
 *   ends every other session), and of an account not disabled (a
 *   disabled account's sessions end on their next request);
 * - a viewer's write is refused here, server-side, with 403;
 * - an admin without 2FA, while console.require_2fa_admins is on, only
 *   reaches the 2FA set-up and sign-out (elsewhere: sent to the account
 *   page, or 403 for a write);
 * - every audited change made while handling the request names this user,
 *   the client IP and the request id.
 */
export default class AdminAuthMiddleware {
  async handle(ctx: HttpContext, next: NextFn, options: AdminAuthOptions = {}) {
    const user = await this.#signedInUser(ctx)
    if (!user) {
      if (READS.has(ctx.request.method())) ctx.session.put(SESSION_KEYS.next, ctx.request.url(true))
      return ctx.response.redirect(adminUrl('/login'))
    }
    ctx.session.put(SESSION_KEYS.seenAt, Date.now())
    ctx.view.share({ adminUser: user })
    if (user.locale) applyAdminLocale(ctx, user.locale)
    if (!options.ownAccount && user.role !== 'admin' && !READS.has(ctx.request.method())) {
      throw new AdminForbidden(
        'Your account can view the console but not change anything (role: viewer).'
      )
    }
    if (!options.enrolment && (await mustEnrolTwoFactor(user))) {
      // The account page says why (its alert), so no flash on the way.
      if (READS.has(ctx.request.method())) return ctx.response.redirect(adminUrl('/account'))
      throw new AdminForbidden(TWO_FACTOR_REQUIRED)
    }
    return actingAs(
      {
        actor: { kind: 'user', userId: user.id, email: user.email },
        ip: ctx.request.ip(),
        requestId: ctx.request.id() ?? null,
      },
      () => next()
    )
  }

  async #signedInUser(ctx: HttpContext): Promise<User | null> {
    const guard = ctx.auth.use('web')
    const user = await guard.check().then(() => guard.user ?? null)
    if (!user) return null
    const loginAt = Number(ctx.session.get(SESSION_KEYS.loginAt, 0))
    const seenAt = Number(ctx.session.get(SESSION_KEYS.seenAt, 0))
    const now = Date.now()
    let reason: string | null = null
    if (!loginAt || !seenAt) reason = 'Please sign in.'
    else if (now - loginAt > ABSOLUTE_SESSION_MS)
      reason = 'You were signed out: a session lasts at most 12 hours. Please sign in again.'
    else if (now - seenAt > idleTimeoutMs())
      reason = 'You were signed out after a period without activity.'
    else if (user.disabledAt !== null) reason = 'Your account was disabled: ask an administrator.'
    else if (user.passwordChangedAt !== null && user.passwordChangedAt > loginAt) {
      reason = 'Your password was changed: please sign in again.'
    }
    if (reason === null) return user
    await guard.logout()
    ctx.session.clear()
    ctx.session.flash('info', reason)
    return null
  }
}
