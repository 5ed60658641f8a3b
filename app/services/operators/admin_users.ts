import { randomBytes } from 'node:crypto'
import auditLog from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'
import hash from '@adonisjs/core/services/hash'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import User, { ADMIN_ROLES, type AdminRole } from '#models/user'
import { OperatorError } from '#support/cli/operator_error'
import { insertUnlessPresent } from '#support/database/insert_unless_present'
import { isPostgres } from '#support/database/row_lock'

export const MIN_PASSWORD_LENGTH = 12
const MAX_PASSWORD_LENGTH = 256
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/

export type NewAdminUser = { email: string; role?: string; password?: string }
/** `password` is set when it was generated: shown to the operator once. */
export type CreatedAdminUser = { user: User; generatedPassword: string | null }

/** The stored form of an e-mail: trimmed, lower-case; refused when it is not one. */
export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase()
  if (normalized.length > 254 || !EMAIL_PATTERN.test(normalized)) {
    throw new OperatorError(`"${email}" is not an e-mail address`, {
      key: 'not_an_email',
      args: { email },
    })
  }
  return normalized
}

function checkRole(role: string): AdminRole {
  if (!(ADMIN_ROLES as readonly string[]).includes(role)) {
    throw new OperatorError(`The role must be one of: ${ADMIN_ROLES.join(', ')}`, {
      key: 'role_unknown',
      args: { roles: ADMIN_ROLES.join(', ') },
    })
  }
  return role as AdminRole
}

function checkPassword(password: string) {
  if (password.trim().length === 0)
    throw new OperatorError('The password cannot be empty or blank', { key: 'password_blank' })
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw new OperatorError(`The password must have at least ${MIN_PASSWORD_LENGTH} characters`, {
      key: 'password_too_short',
      args: { min: MIN_PASSWORD_LENGTH },
    })
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new OperatorError(`The password may have at most ${MAX_PASSWORD_LENGTH} characters`, {
      key: 'password_too_long',
      args: { max: MAX_PASSWORD_LENGTH },
    })
  }
}

function newPassword() {
  return randomBytes(15).toString('base64url')
}

/**
 * Administrators of the console as operators manage them (ace commands
 * today, the console later): every input is checked here, and a refusal
 * is an OperatorError whose message is meant for the operator.
 */
export class AdminUsers {
  constructor(protected audit = auditLog) {}

  /** Verified against when the e-mail is unknown, so the answer takes as long. */
  #standInHash: Promise<string> | null = null

  list() {
    return User.query().orderBy('email')
  }

  async find(email: string): Promise<User> {
    const user = await User.findBy('email', normalizeEmail(email))
    if (!user)
      throw new OperatorError(`No administrator has the e-mail ${email.trim()}`, {
        key: 'no_such_admin',
        args: { email: email.trim() },
      })
    return user
  }

  /** Creates an administrator; refused when the e-mail is taken (in any case). */
  async create(input: NewAdminUser): Promise<CreatedAdminUser> {
    const created = await this.createUnlessPresent(input)
    if (!created)
      throw new OperatorError(
        `An administrator with the e-mail ${input.email.trim()} already exists`,
        { key: 'admin_exists', args: { email: input.email.trim() } }
      )
    return created
  }

  /**
   * Creates the administrator unless one has that e-mail (null then): the
   * installation seeder runs on every start, possibly twice at once.
   */
  async createUnlessPresent(
    input: NewAdminUser,
    client?: QueryClientContract
  ): Promise<CreatedAdminUser | null> {
    if (!client) return db.transaction((trx) => this.createUnlessPresent(input, trx))
    const email = normalizeEmail(input.email)
    const role = checkRole(input.role ?? 'admin')
    if (input.password !== undefined) checkPassword(input.password)
    const password = input.password ?? newPassword()
    const now = Date.now()
    const { inserted, id } = await insertUnlessPresent(
      client,
      'users',
      {
        email,
        password: await hash.use('scrypt').make(password),
        role,
        password_changed_at: now,
        created_at: now,
        updated_at: now,
      },
      'email'
    )
    if (!inserted) return null
    const user =
      id === null
        ? await User.query({ client }).where('email', email).firstOrFail()
        : await User.query({ client }).where('id', id).firstOrFail()
    await this.audit.record(
      {
        action: 'user.create',
        subjectType: 'user',
        subjectId: user.id,
        after: snapshot.user(user),
      },
      client
    )
    return { user, generatedPassword: input.password === undefined ? password : null }
  }

  /**
   * Replaces the password (a random one when none is given, returned to be
   * shown once). Sessions opened before now stop being valid.
   */
  async setPassword(email: string, password?: string) {
    const user = await this.find(email)
    if (password !== undefined) checkPassword(password)
    const before = snapshot.user(user)
    const chosen = password ?? newPassword()
    // The model's auth-finder hook hashes a changed password (scrypt) when saving.
    user.password = chosen
    user.passwordChangedAt = Date.now()
    await this.#save(user, 'user.password', before)
    return { user, generatedPassword: password === undefined ? chosen : null }
  }

  /**
   * A signed-in user changing their own password: the current one is asked
   * again (an unattended session is not enough). Other sessions end.
   */
  async changeOwnPassword(user: User, current: string, next: string) {
    if (!(await hash.use('scrypt').verify(user.password, current))) {
      throw new OperatorError('The current password is not right: nothing was changed', {
        key: 'current_password_wrong',
      })
    }
    if (current === next)
      throw new OperatorError('The new password must differ from the current one', {
        key: 'password_unchanged',
      })
    return this.setPassword(user.email, next)
  }

  /** Changes the role; the last admin cannot be made a viewer (nobody could change anything). */
  async setRole(email: string, role: string) {
    const wanted = checkRole(role)
    const normalized = normalizeEmail(email)
    return db.transaction(async (trx) => {
      // Every admin row locked: two demotions at once cannot both see "another admin left".
      if (isPostgres(trx)) await trx.from('users').where('role', 'admin').forUpdate().select('id')
      else await trx.from('users').where('role', 'admin').update({ role: 'admin' })
      const user = await User.query({ client: trx }).where('email', normalized).first()
      if (!user)
        throw new OperatorError(`No administrator has the e-mail ${email.trim()}`, {
          key: 'no_such_admin',
          args: { email: email.trim() },
        })
      if (user.role === 'admin' && user.disabledAt === null && wanted !== 'admin') {
        if ((await this.#enabledAdmins(trx)) <= 1) {
          throw new OperatorError(
            `${user.email} is the last admin: make another user admin first`,
            { key: 'last_admin', args: { email: user.email } }
          )
        }
      }
      const before = snapshot.user(user)
      user.role = wanted
      await user.save()
      await this.audit.record(
        {
          action: 'user.role',
          subjectType: 'user',
          subjectId: user.id,
          before,
          after: snapshot.user(user),
        },
        trx
      )
      return user
    })
  }

  /**
   * Disables the account: it cannot sign in and its sessions end on their
   * next request. The last enabled admin cannot be disabled (nobody could
   * change anything, nor enable it again from the console); `actingUserId`
   * (the console's signed-in user) cannot disable itself. Tells whether
   * it changed anything (an account already disabled is left as it is).
   */
  async disable(email: string, options: { actingUserId?: number } = {}) {
    return this.#setDisabled(email, true, options.actingUserId)
  }

  /** Enables a disabled account again (its password and 2FA as they were); tells whether it changed. */
  async enable(email: string) {
    return this.#setDisabled(email, false)
  }

  #setDisabled(email: string, disable: boolean, actingUserId?: number) {
    const normalized = normalizeEmail(email)
    return db.transaction(async (trx) => {
      // Every admin row locked, as in setRole: two admins disabling each other cannot both see "another admin left".
      if (isPostgres(trx)) await trx.from('users').where('role', 'admin').forUpdate().select('id')
      else await trx.from('users').where('role', 'admin').update({ role: 'admin' })
      const user = await User.query({ client: trx }).where('email', normalized).first()
      if (!user)
        throw new OperatorError(`No administrator has the e-mail ${email.trim()}`, {
          key: 'no_such_admin',
          args: { email: email.trim() },
        })
      if ((user.disabledAt !== null) === disable) return { user, changed: false }
      if (disable) {
        if (actingUserId !== undefined && user.id === actingUserId) {
          throw new OperatorError(
            'You cannot disable your own account: another admin must do it.',
            { key: 'disable_self' }
          )
        }
        if (user.role === 'admin' && (await this.#enabledAdmins(trx)) <= 1) {
          throw new OperatorError(
            `${user.email} is the last enabled admin: enable or add another admin first`,
            { key: 'last_enabled_admin', args: { email: user.email } }
          )
        }
      }
      const before = snapshot.user(user)
      user.disabledAt = disable ? Date.now() : null
      await user.save()
      await this.audit.record(
        {
          action: disable ? 'user.disabled' : 'user.enabled',
          subjectType: 'user',
          subjectId: user.id,
          before,
          after: snapshot.user(user),
        },
        trx
      )
      return { user, changed: true }
    })
  }

  async #enabledAdmins(trx: QueryClientContract) {
    const [row] = await trx
      .from('users')
      .where('role', 'admin')
      .whereNull('disabled_at')
      .count('* as total')
    return Number(row.total)
  }

  /** Turns two-factor sign-in off (lost authenticator); tells whether it was on. */
  async reset2fa(email: string) {
    const user = await this.find(email)
    const wasEnabled = user.totpSecret !== null || user.totpEnabledAt !== null
    const before = snapshot.user(user)
    user.merge({ totpSecret: null, totpEnabledAt: null, totpLastStep: null, recoveryCodes: null })
    await this.#save(user, 'user.2fa_reset', before)
    return { user, wasEnabled }
  }

  #save(user: User, action: string, before: ReturnType<typeof snapshot.user>) {
    return this.audit.change(
      async (trx) => {
        user.useTransaction(trx)
        await user.save()
        return user
      },
      (saved) => ({
        action,
        subjectType: 'user',
        subjectId: saved.id,
        before,
        after: snapshot.user(saved),
      })
    )
  }

  /**
   * The user when the e-mail and password match, else null. An unknown
   * e-mail costs one scrypt verification too: the timing does not tell
   * which e-mails exist.
   */
  async verifyCredentials(email: string, password: string): Promise<User | null> {
    const hasher = hash.use('scrypt')
    let normalized: string | null
    try {
      normalized = normalizeEmail(email)
    } catch {
      normalized = null
    }
    const user = normalized === null ? null : await User.findBy('email', normalized)
    if (!user) {
      this.#standInHash ??= hasher.make(randomBytes(16).toString('hex'))
      await hasher.verify(await this.#standInHash, password)
      return null
    }
    if (!(await hasher.verify(user.password, password))) return null
    if (hasher.needsReHash(user.password)) await this.#rehash(user, password)
    return user
  }

  /**
   * Redoes a hash made with older parameters (config/hash.ts), now that the
   * password is known. Not a password change: sessions stay, nothing is
   * audited; a change made meanwhile (another hash stored) is left alone.
   */
  async #rehash(user: User, password: string) {
    const previous = user.password
    const rehashed = await hash.use('scrypt').make(password)
    await db
      .from('users')
      .where('id', user.id)
      .where('password', previous)
      .update({ password: rehashed })
    user.password = rehashed
  }
}

const adminUsers = new AdminUsers()
export default adminUsers
