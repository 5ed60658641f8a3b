import adminUsers from '#services/operators/admin_users'
import twoFactor from '#services/operators/two_factor'
import { adminUrl } from '#admin/admin_paths'
import settings from '#settings/settings_service'
import { base32Decode, totpCode } from '#support/crypto/totp'
import type User from '#models/user'

export const ADMIN_PASSWORD = 'correct horse battery staple'

let counter = 0

export type AdminUser = { user: User; email: string; password: string; totpSecret: string | null }

/**
 * An administrator (or viewer) through the same service as `admin:create`;
 * `totp: true` also turns 2FA on. An admin made without it can only use the
 * console while console.require_2fa_admins is off: the setting is turned off
 * unless the test set it itself (tests of the requirement set it on first).
 */
export async function createAdminUser(
  options: { role?: 'admin' | 'viewer'; email?: string; password?: string; totp?: boolean } = {}
): Promise<AdminUser> {
  counter += 1
  const email = options.email ?? `admin${counter}-${process.pid}@example.com`
  const password = options.password ?? ADMIN_PASSWORD
  const users = adminUsers
  const { user } = await users.create({ email, password, role: options.role ?? 'admin' })
  let totpSecret: string | null = null
  if (options.totp) {
    const { secret } = await twoFactor.begin(user, 'Test')
    // The step before now: sign-in tests may then use the current step's code.
    await twoFactor.confirm(user, currentTotp(secret, Date.now() - 30_000), Date.now() - 30_000)
    totpSecret = secret
  }
  if (user.role === 'admin' && !options.totp)
    await settings.setIfMissing('console.require_2fa_admins', 'false')
  await user.refresh()
  return { user, email, password, totpSecret }
}

/** The TOTP code of `secret` at `nowMs`. */
export function currentTotp(secret: string, nowMs = Date.now()): string {
  return totpCode(base32Decode(secret)!, nowMs)
}

export type AdminResponse = {
  status: number
  /** The body (HTML page, CSV, ...). */
  text: string
  headers: Headers
  /** Where a redirect goes (path and query), or null. */
  location: string | null
}

/**
 * A browser-like client of the console over real HTTP against the test
 * server: it keeps cookies, reads the CSRF token from the pages it gets and
 * sends it with every POST, like a browser submitting the page's form.
 * Paths are relative to ADMIN_PATH (`/orders`), or absolute when they start
 * with ADMIN_PATH itself.
 */
export class AdminAgent {
  cookies = new Map<string, string>()
  csrf: string | null = null
  /** The last page got (its path and query): sent as the form's `_back`, as the page's form would. */
  lastPage: string | null = null
  /** Sent with every request (e.g. X-Forwarded-For to come from another client IP). */
  headers: Record<string, string> = {}

  /** `base`: another gateway process (default: the test server, APP_URL). */
  constructor(readonly base: string = process.env.APP_URL!) {}

  static async signIn(
    who: AdminUser | { email: string; password: string; totpSecret?: string | null },
    base?: string
  ) {
    const agent = new AdminAgent(base)
    const first = await agent.submit('/login', { email: who.email, password: who.password })
    if (first.status !== 302) throw new Error(`sign-in failed: HTTP ${first.status}`)
    if (first.location?.endsWith('/login/2fa')) {
      if (!who.totpSecret) throw new Error('this user has 2FA on: pass its totpSecret')
      const second = await agent.submit('/login/2fa', { code: currentTotp(who.totpSecret) })
      if (second.status !== 302 || second.location?.endsWith('/login/2fa'))
        throw new Error('second factor refused')
    } else if (first.location?.endsWith('/login')) {
      throw new Error('sign-in refused: wrong e-mail or password')
    }
    return agent
  }

  url(path: string): string {
    const full = path.startsWith(adminUrl('/')) || path === adminUrl() ? path : adminUrl(path)
    return `${this.base}${full}`
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<AdminResponse> {
    return this.#send('GET', path, undefined, headers)
  }

  /** GETs `path` and follows redirects (at most 5), like a browser. */
  async follow(path: string): Promise<AdminResponse & { path: string }> {
    let current = path
    for (let hop = 0; hop < 5; hop++) {
      const response = await this.get(current)
      if (!response.location || response.status < 300 || response.status >= 400)
        return { ...response, path: current }
      current = response.location
    }
    throw new Error(`too many redirects from ${path}`)
  }

  /**
   * POSTs a form as the page's form would: with the CSRF token of the last
   * page (one is fetched first when none was seen). `csrf: null` leaves the
   * token out, a string sends that one instead.
   */
  async post(
    path: string,
    fields: Record<string, string | string[]> = {},
    options: { csrf?: string | null } = {}
  ) {
    if (this.csrf === null && options.csrf === undefined) await this.get('/login')
    const token = options.csrf === undefined ? this.csrf : options.csrf
    const body = new URLSearchParams()
    if (token !== null) body.append('_csrf', token)
    if (this.lastPage !== null && !('_back' in fields)) body.append('_back', this.lastPage)
    for (const [name, value] of Object.entries(fields)) {
      for (const item of Array.isArray(value) ? value : [value]) body.append(name, item)
    }
    return this.#send('POST', path, body)
  }

  /** Like post(), the CSRF token taken from the page at `path` first (GET), as a user filling in that page. */
  async submit(path: string, fields: Record<string, string | string[]> = {}, formPage = path) {
    await this.get(formPage)
    return this.post(path, fields)
  }

  async #send(
    method: string,
    path: string,
    body?: URLSearchParams,
    headers: Record<string, string> = {}
  ) {
    const response = await fetch(this.url(path), {
      method,
      redirect: 'manual',
      headers: {
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...(this.cookies.size
          ? { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') }
          : {}),
        accept: 'text/html',
        ...this.headers,
        ...headers,
      },
      body,
    })
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';')
      const index = pair.indexOf('=')
      const name = pair.slice(0, index).trim()
      const value = pair.slice(index + 1).trim()
      const expired = attributes.some(
        (attribute) =>
          /^\s*max-age=0\s*$/i.test(attribute) || /expires=thu, 01 jan 1970/i.test(attribute)
      )
      if (expired || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    const text = await response.text()
    const token = /name=['"]_csrf['"] value=['"]([^'"]+)['"]/.exec(text)
    if (token) this.csrf = token[1]
    if (method === 'GET' && response.status === 200)
      this.lastPage = new URL(this.url(path)).pathname + new URL(this.url(path)).search
    const location = response.headers.get('location')
    return {
      status: response.status,
      text,
      headers: response.headers,
      location: location ? location.replace(/^https?:\/\/[^/]+/, '') : null,
    } satisfies AdminResponse
  }
}

/** The text of a page without tags (for "the page says ..." assertions). */
export function pageText(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/\s+/g, ' ')
    .trim()
}
