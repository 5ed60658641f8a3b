import type { HttpContext } from '@adonisjs/core/http'
import env from '#start/env'
import type User from '#models/user'

/** Session keys of the console (besides the guard's own). */
export const SESSION_KEYS = {
  loginAt: 'console_login_at',
  seenAt: 'console_seen_at',
  /** A user who passed the password step and still owes the second factor. */
  pending: 'console_pending_2fa',
  /** Where to go after signing in. */
  next: 'console_next',
} as const

/** How long a console session may sit idle (ADMIN_IDLE_MINUTES, default 30). */
export function idleTimeoutMs(): number {
  return Math.max(1, env.get('ADMIN_IDLE_MINUTES') ?? 30) * 60_000
}

/**
 * How long a console session lives at most, whatever the activity: past
 * it the password (and second factor) are asked again.
 */
export const ABSOLUTE_SESSION_MS = 12 * 3600_000

/**
 * Signs `user` in: the guard renews the session id (no fixation) and the
 * console notes when, for the idle timeout and the password-change check.
 */
export async function startAdminSession(ctx: HttpContext, user: User) {
  ctx.session.forget(SESSION_KEYS.pending)
  await ctx.auth.use('web').login(user)
  const now = Date.now()
  ctx.session.put(SESSION_KEYS.loginAt, now)
  ctx.session.put(SESSION_KEYS.seenAt, now)
}

/** Names of inputs never put back into a form after a refusal. */
const SECRET_INPUT = /password|secret|token|api_key|apikey|^code$|recovery|_csrf/i

/** Flashes the submitted fields (secrets left out) so the form shows them again. */
export function flashInputWithoutSecrets(ctx: HttpContext) {
  const input = ctx.request.all()
  const kept: Record<string, any> = {}
  for (const [name, value] of Object.entries(input)) {
    if (!SECRET_INPUT.test(name)) kept[name] = value
  }
  ctx.session.flash(kept)
}
