import { randomBytes } from 'node:crypto'
import hash from '@adonisjs/core/services/hash'
import db from '@adonisjs/lucid/services/db'
import User from '#models/user'
import auditLog from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'
import { OperatorError } from '#support/cli/operator_error'
import { SecretPurpose, revealSecret, sealSecret } from '#support/crypto/secret_box'
import {
  base32Decode,
  base32Encode,
  matchTotp,
  newTotpSecret,
  otpauthUri,
} from '#support/crypto/totp'

export const RECOVERY_CODE_COUNT = 10

/** `xxxxx-xxxxx`, 50 random bits: typed by hand from paper, so short and unambiguous (base32). */
function newRecoveryCode() {
  const text = base32Encode(randomBytes(7)).slice(0, 10).toLowerCase()
  return `${text.slice(0, 5)}-${text.slice(5)}`
}

function normalizeRecoveryCode(code: string) {
  return code.replace(/[\s-]/g, '').toLowerCase()
}

/**
 * Two-factor sign-in of the console's users: TOTP enrolment (a secret
 * shown once as a QR code / key, enabled only after a first valid code),
 * code checks that never accept a code twice, ten single-use recovery
 * codes, and turning it off with the password.
 */
export class TwoFactor {
  constructor(protected audit = auditLog) {}

  /** A new secret for `user`, stored sealed but not enabled until confirm(): a half-done enrolment locks nobody out. */
  async begin(user: User, issuer: string, reauthentication?: { password: string }) {
    if (user.totpEnabledAt !== null)
      throw new OperatorError('Two-factor sign-in is already on: turn it off first', {
        key: 'two_factor_on_turn_off',
      })
    // From the console the password is asked again: a session left open must not bind its own authenticator.
    if (
      reauthentication &&
      !(await hash.use('scrypt').verify(user.password, reauthentication.password))
    ) {
      throw new OperatorError('Wrong password: two-factor set-up was not started', {
        key: 'two_factor_setup_wrong_password',
      })
    }
    const secret = newTotpSecret()
    await this.audit.change(
      (trx) =>
        User.query({ client: trx })
          .where('id', user.id)
          .update({
            totp_secret: sealSecret(secret, SecretPurpose.totpSecret),
            totp_last_step: null,
          }),
      () => ({
        action: 'user.2fa_start',
        subjectType: 'user',
        subjectId: user.id,
        after: { email: user.email },
      })
    )
    await user.refresh()
    return { secret, uri: otpauthUri(issuer, user.email, secret) }
  }

  /** The enrolment waiting for its first code (secret and otpauth URI to show again), or null. */
  pendingEnrolment(user: User, issuer: string): { secret: string; uri: string } | null {
    if (user.totpEnabledAt !== null || user.totpSecret === null) return null
    const secret = revealSecret(user.totpSecret, SecretPurpose.totpSecret)
    return { secret, uri: otpauthUri(issuer, user.email, secret) }
  }

  /** Turns 2FA on when `code` matches the pending secret; the recovery codes are returned once, stored hashed. */
  async confirm(user: User, code: string, nowMs = Date.now()): Promise<string[]> {
    if (user.totpEnabledAt !== null)
      throw new OperatorError('Two-factor sign-in is already on', { key: 'two_factor_already_on' })
    if (user.totpSecret === null)
      throw new OperatorError('Start the enrolment first: no secret is waiting for a code', {
        key: 'two_factor_not_started',
      })
    const step = matchTotp(this.#key(user), code, nowMs, null)
    if (step === null)
      throw new OperatorError(
        'That code is not valid: check the time of the phone and try the next one',
        { key: 'two_factor_bad_code' }
      )
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode)
    const hashes = await Promise.all(
      codes.map((recovery) => hash.use('recovery').make(normalizeRecoveryCode(recovery)))
    )
    const before = snapshot.user(user)
    await this.audit.change(
      async (trx) => {
        user.useTransaction(trx)
        user.merge({
          totpEnabledAt: nowMs,
          totpLastStep: step,
          recoveryCodes: JSON.stringify(hashes),
        })
        await user.save()
        return user
      },
      (saved) => ({
        action: 'user.2fa_enable',
        subjectType: 'user',
        subjectId: saved.id,
        before,
        after: snapshot.user(saved),
      })
    )
    return codes
  }

  /**
   * Whether `code` is the user's current TOTP code. The accepted step is
   * recorded with a conditional update: of two sign-ins racing with the
   * same code, one wins.
   */
  async verify(user: User, code: string, nowMs = Date.now()): Promise<boolean> {
    const current = await User.find(user.id)
    if (!current || current.totpEnabledAt === null || current.totpSecret === null) return false
    const step = matchTotp(this.#key(current), code, nowMs, current.totpLastStep)
    if (step === null) return false
    const updated = await db
      .from('users')
      .where('id', user.id)
      .where((guard) => guard.whereNull('totp_last_step').orWhere('totp_last_step', '<', step))
      .update({ totp_last_step: step })
    return Number(Array.isArray(updated) ? updated[0] : updated) === 1
  }

  /** Signs in with a recovery code instead: each works once (compare-and-set on the stored list). */
  async useRecoveryCode(user: User, code: string): Promise<boolean> {
    const current = await User.find(user.id)
    if (!current || current.totpEnabledAt === null || current.recoveryCodes === null) return false
    const given = normalizeRecoveryCode(code)
    if (!/^[a-z2-7]{10}$/.test(given)) return false
    const hashes: string[] = JSON.parse(current.recoveryCodes)
    let index = -1
    for (const [position, stored] of hashes.entries()) {
      if (index === -1 && (await hash.use('recovery').verify(stored, given))) index = position
    }
    if (index === -1) return false
    const remaining = hashes.filter((_, position) => position !== index)
    const updated = await db
      .from('users')
      .where('id', user.id)
      .where('recovery_codes', current.recoveryCodes)
      .update({ recovery_codes: JSON.stringify(remaining) })
    return Number(Array.isArray(updated) ? updated[0] : updated) === 1
  }

  /** How many recovery codes are left. */
  remainingRecoveryCodes(user: User): number {
    return user.recoveryCodes === null ? 0 : (JSON.parse(user.recoveryCodes) as string[]).length
  }

  /** Turns 2FA off; the password is asked again (a session left open is not enough). */
  async disable(user: User, password: string) {
    if (!(await hash.use('scrypt').verify(user.password, password))) {
      throw new OperatorError('Wrong password: two-factor sign-in stays on', {
        key: 'two_factor_off_wrong_password',
      })
    }
    if (user.totpEnabledAt === null && user.totpSecret === null) return user
    const before = snapshot.user(user)
    return this.audit.change(
      async (trx) => {
        user.useTransaction(trx)
        user.merge({
          totpSecret: null,
          totpEnabledAt: null,
          totpLastStep: null,
          recoveryCodes: null,
        })
        await user.save()
        return user
      },
      (saved) => ({
        action: 'user.2fa_disable',
        subjectType: 'user',
        subjectId: saved.id,
        before,
        after: snapshot.user(saved),
      })
    )
  }

  #key(user: User): Buffer {
    const key = base32Decode(revealSecret(user.totpSecret ?? '', SecretPurpose.totpSecret))
    if (key === null) throw new Error(`the TOTP secret of user ${user.id} is not base32`)
    return key
  }
}

const twoFactor = new TwoFactor()
export default twoFactor
