import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { actingAs } from '#services/audit/audit_context'
import { adminUrl } from '#console/console_paths'
import { SESSION_KEYS, idleTimeoutMs } from '#console/console_session'
import { ConsoleForbidden } from '#console/console_errors'
import type User from '#models/user'

export type ConsoleAuthOptions = {
  /**
   * Routes of the signed-in user's own account (password, two-factor, sign
   * out): open to viewers too. Everywhere else a viewer may only read.
   */
  ownAccount?: boolean
}

const READS = new Set(['GET', 'HEAD'])

/**
 * The console's gate, on every console route but the sign-in pages:
 * - a session must be signed in, not idle longer than ADMIN_IDLE_MINUTES,
 *   and opened after the user's last password change (a changed password
 *   ends every other session);
 * - a viewer's write is refused here, server-side, with 403;
 * - every audited change made while handling the request names this user,
 *   the client IP and the request id.
 */
export default class ConsoleAuthMiddleware {
  async handle(ctx: HttpContext, next: NextFn, options: ConsoleAuthOptions = {}) {
    const user = await this.#signedInUser(ctx)
    if (!user) {
      if (READS.has(ctx.request.method())) ctx.session.put(SESSION_KEYS.next, ctx.request.url(true))
      return ctx.response.redirect(adminUrl('/login'))
    }
    ctx.session.put(SESSION_KEYS.seenAt, Date.now())
    ctx.view.share({ consoleUser: user })
    if (!options.ownAccount && user.role !== 'admin' && !READS.has(ctx.request.method())) {
      throw new ConsoleForbidden('Your account can view the console but not change anything (role: viewer).')
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
    else if (now - seenAt > idleTimeoutMs()) reason = 'You were signed out after a period without activity.'
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
