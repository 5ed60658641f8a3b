import type { HttpContext } from '@adonisjs/core/http'
import vine from '@vinejs/vine'
import db from '@adonisjs/lucid/services/db'
import User from '#models/user'
import { raiseNotification } from '#notifications/notifier'
import adminUsers from '#services/operators/admin_users'
import twoFactor from '#services/operators/two_factor'
import auditLog from '#services/audit/audit_log'
import { actingAs, type AuditActor } from '#services/audit/audit_context'
import { adminUrl, safeAdminReturn } from '#admin/admin_paths'
import { SESSION_KEYS, startAdminSession } from '#admin/admin_session'
import { loginThrottle } from '#admin/login_throttle'

const credentials = vine.compile(
  vine.object({
    email: vine.string().trim().maxLength(254),
    password: vine.string().maxLength(256),
  })
)

const secondFactor = vine.compile(vine.object({ code: vine.string().trim().maxLength(64) }))

/** How long the password step stays valid while the second factor is asked. */
const PENDING_2FA_MS = 5 * 60_000

type Pending = { userId: number; email: string; at: number }

/**
 * Signing in and out of the console: the password step, then the second
 * factor when the user has it on. Every attempt is counted before its
 * secret is checked, per IP, per account and IP, and per account
 * (app/admin/login_throttle.ts); every sign-in, failure, throttled
 * attempt and sign-out is in the audit log.
 */
export default class SessionController {
  constructor(
    protected users = adminUsers,
    protected twoFactorAuth = twoFactor,
    protected audit = auditLog
  ) {}

  async showLogin({ view, auth, response }: HttpContext) {
    if (await auth.use('web').check()) return response.redirect(adminUrl('/'))
    return view.render('admin/auth/login')
  }

  async login(ctx: HttpContext) {
    const { request, response, session } = ctx
    const { email, password } = await request.validateUsing(credentials)
    const ip = request.ip()
    const wait = await loginThrottle.attempt(ip, email)
    if (wait > 0) return this.#throttled(ctx, email, null, wait)

    const user = await this.users.verifyCredentials(email, password)
    // A disabled account gets the same answer as a wrong password (no account enumeration); the audit log says why.
    if (!user || user.disabledAt !== null) {
      await this.#audit(ctx, { kind: 'visitor' }, 'auth.login_failed', user?.id ?? null, {
        email: email.toLowerCase(),
        reason: user ? 'account disabled' : 'wrong e-mail or password',
      })
      session.flash('email', email)
      session.flash('error', ctx.i18n.t('admin.auth.failed'))
      return response.redirect(adminUrl('/login'))
    }
    if (user.totpEnabledAt !== null) {
      const pending: Pending = { userId: user.id, email: user.email, at: Date.now() }
      session.put(SESSION_KEYS.pending, pending)
      return response.redirect(adminUrl('/login/2fa'))
    }
    return this.#signIn(ctx, user, 'password')
  }

  async showSecondFactor({ view, session, response }: HttpContext) {
    const pending = this.#pending(session.get(SESSION_KEYS.pending))
    if (!pending) return response.redirect(adminUrl('/login'))
    return view.render('admin/auth/second_factor', { email: pending.email })
  }

  async secondFactor(ctx: HttpContext) {
    const { request, response, session } = ctx
    const pending = this.#pending(session.get(SESSION_KEYS.pending))
    if (!pending) {
      session.flash('info', ctx.i18n.t('admin.auth.expired'))
      return response.redirect(adminUrl('/login'))
    }
    const { code } = await request.validateUsing(secondFactor)
    const ip = request.ip()
    const wait = await loginThrottle.attempt(ip, pending.email)
    if (wait > 0) return this.#throttled(ctx, pending.email, pending.userId, wait, 'second_factor')

    const user = await User.find(pending.userId)
    let method: 'totp' | 'recovery code' | null = null
    if (user) {
      if (/^\d{6}$/.test(code.replace(/\s/g, ''))) {
        if (await this.twoFactorAuth.verify(user, code.replace(/\s/g, ''))) method = 'totp'
      } else if (await this.twoFactorAuth.useRecoveryCode(user, code)) {
        method = 'recovery code'
      }
    }
    if (!user || method === null || user.disabledAt !== null) {
      await this.#audit(ctx, { kind: 'visitor' }, 'auth.login_failed', pending.userId, {
        email: pending.email,
        reason: user && method !== null ? 'account disabled' : 'wrong second-factor code',
      })
      session.flash('error', ctx.i18n.t('admin.auth.code_invalid'))
      return response.redirect(adminUrl('/login/2fa'))
    }
    return this.#signIn(ctx, user, method)
  }

  async logout(ctx: HttpContext) {
    const user = ctx.auth.use('web').user
    if (user)
      await this.#audit(
        ctx,
        { kind: 'user', userId: user.id, email: user.email },
        'auth.logout',
        user.id,
        { email: user.email }
      )
    await ctx.auth.use('web').logout()
    ctx.session.clear()
    ctx.session.flash('success', ctx.i18n.t('admin.auth.signed_out'))
    return ctx.response.redirect(adminUrl('/login'))
  }

  async #signIn(ctx: HttpContext, user: User, method: string) {
    const next = safeAdminReturn(ctx.session.get(SESSION_KEYS.next))
    await startAdminSession(ctx, user)
    await loginThrottle.succeeded(ctx.request.ip(), user.email, method === 'password' ? 1 : 2)
    await User.query().where('id', user.id).update({ last_login_at: Date.now() })
    await this.#notifyNewAddress(ctx, user, method)
    await this.#audit(
      ctx,
      { kind: 'user', userId: user.id, email: user.email },
      'auth.login',
      user.id,
      {
        email: user.email,
        method,
      }
    )
    ctx.session.forget(SESSION_KEYS.next)
    return ctx.response.redirect(next ?? adminUrl('/'))
  }

  /**
   * admin.sign_in when this account never signed in from this address
   * before (its audit trail of sign-ins says so): read before this
   * sign-in's own audit row is written.
   */
  async #notifyNewAddress(ctx: HttpContext, user: User, method: string) {
    const ip = ctx.request.ip()
    const seen = await db
      .from('audit_log')
      .where('action', 'auth.login')
      .where('actor_user_id', user.id)
      .where('ip', ip)
      .first()
    if (seen) return
    await raiseNotification('admin.sign_in', { email: user.email, ip, role: user.role, method })
  }

  /** Answered with the form itself, HTTP 429 and Retry-After: the password (or code) was not even checked. */
  async #throttled(
    ctx: HttpContext,
    email: string,
    userId: number | null,
    seconds: number,
    page: 'login' | 'second_factor' = 'login'
  ) {
    const { view, response } = ctx
    await this.#audit(ctx, { kind: 'visitor' }, 'auth.login_throttled', userId, {
      email: email.trim().toLowerCase(),
      step: page === 'login' ? 'password' : 'second factor',
      retry_after_seconds: seconds,
    })
    response.header('retry-after', String(seconds))
    response.status(429)
    return view.render(`admin/auth/${page}`, {
      email,
      throttled: ctx.i18n.t('admin.auth.throttled', { seconds: String(seconds) }),
    })
  }

  #pending(value: unknown): Pending | null {
    const pending = value as Pending | undefined
    if (!pending || typeof pending.userId !== 'number' || Date.now() - pending.at > PENDING_2FA_MS)
      return null
    return pending
  }

  #audit(
    ctx: HttpContext,
    actor: AuditActor,
    action: string,
    subjectId: number | null,
    after: Record<string, unknown>
  ) {
    return actingAs({ actor, ip: ctx.request.ip(), requestId: ctx.request.id() ?? null }, () =>
      this.audit.record({ action, subjectType: 'user', subjectId: subjectId ?? '', after })
    )
  }
}
