import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import User from '#models/user'
import twoFactor, { RECOVERY_CODE_COUNT } from '#services/operators/two_factor'
import { base32Decode, hotp } from '#support/crypto/totp'
import { resetDatabase } from '#tests/helpers/database'

const EMAIL = 'admin@example.test'
const PASSWORD = 'test-admin-password'
const NOW = 1_800_000_000_000
const STEP = Math.floor(NOW / 30_000)

async function enrolled() {
  const user = await User.findByOrFail('email', EMAIL)
  const { secret, uri } = await twoFactor.begin(user, 'Gateway')
  const key = base32Decode(secret)!
  const codes = await twoFactor.confirm(user, hotp(key, STEP), NOW)
  return { user, secret, uri, key, codes }
}

test.group('Two-factor sign-in', (group) => {
  group.each.setup(() => resetDatabase())

  test('enrolment: the secret is stored sealed, 2FA is off until a valid code confirms it', async ({
    assert,
  }) => {
    const user = await User.findByOrFail('email', EMAIL)
    const { secret, uri } = await twoFactor.begin(user, 'Gateway')
    assert.include(uri, `secret=${secret}`)
    const [row] = await db
      .from('users')
      .where('email', EMAIL)
      .select('totp_secret', 'totp_enabled_at')
    assert.match(row.totp_secret, /^app\.v1:/)
    assert.notInclude(row.totp_secret, secret)
    assert.isNull(row.totp_enabled_at)

    const key = base32Decode(secret)!
    await assert.rejects(() => twoFactor.confirm(user, hotp(key, STEP + 5), NOW), /not valid/)
    assert.isNull((await User.findByOrFail('email', EMAIL)).totpEnabledAt)
    const codes = await twoFactor.confirm(user, hotp(key, STEP), NOW)
    assert.lengthOf(codes, RECOVERY_CODE_COUNT)
    assert.lengthOf(new Set(codes), RECOVERY_CODE_COUNT)
    const after = await User.findByOrFail('email', EMAIL)
    assert.equal(after.totpEnabledAt, NOW)
    for (const code of codes) assert.notInclude(after.recoveryCodes!, code.replace('-', ''))
    await assert.rejects(() => twoFactor.begin(after, 'Gateway'), /already on/)
  })

  test('confirm without a pending secret is refused', async ({ assert }) => {
    const user = await User.findByOrFail('email', EMAIL)
    await assert.rejects(() => twoFactor.confirm(user, '123456', NOW), /Start the enrolment first/)
  })

  test('a code works once; an older code after a newer one is refused; a wrong code is refused', async ({
    assert,
  }) => {
    const { user, key } = await enrolled()
    // The confirming code's step is already used.
    assert.isFalse(await twoFactor.verify(user, hotp(key, STEP), NOW))
    const later = NOW + 30_000
    assert.isTrue(await twoFactor.verify(user, hotp(key, STEP + 1), later))
    assert.isFalse(await twoFactor.verify(user, hotp(key, STEP + 1), later))
    assert.isFalse(await twoFactor.verify(user, '000000', later + 30_000))
    assert.equal((await User.findByOrFail('email', EMAIL)).totpLastStep, STEP + 1)
  })

  test('two sign-ins racing with the same code: exactly one is accepted', async ({ assert }) => {
    const { user, key } = await enrolled()
    const code = hotp(key, STEP + 1)
    const results = await Promise.all([
      twoFactor.verify(user, code, NOW + 30_000),
      twoFactor.verify(user, code, NOW + 30_000),
      twoFactor.verify(user, code, NOW + 30_000),
    ])
    assert.equal(results.filter(Boolean).length, 1)
  })

  test('recovery codes: each works once, in any case and without the dash; a made-up one fails', async ({
    assert,
  }) => {
    const { user, codes } = await enrolled()
    assert.isTrue(await twoFactor.useRecoveryCode(user, codes[3].toUpperCase().replace('-', '')))
    assert.isFalse(await twoFactor.useRecoveryCode(user, codes[3]))
    assert.isFalse(await twoFactor.useRecoveryCode(user, 'aaaaa-bbbbb'))
    assert.isFalse(await twoFactor.useRecoveryCode(user, 'not a code'))
    assert.equal(
      twoFactor.remainingRecoveryCodes(await User.findByOrFail('email', EMAIL)),
      RECOVERY_CODE_COUNT - 1
    )
    assert.isTrue(await twoFactor.useRecoveryCode(user, codes[0]))
  })

  test('disable asks the password: wrong one refused, right one clears everything; both audited changes', async ({
    assert,
  }) => {
    const { user, key } = await enrolled()
    await assert.rejects(() => twoFactor.disable(user, 'wrong password!'), /Wrong password/)
    assert.isNotNull((await User.findByOrFail('email', EMAIL)).totpEnabledAt)
    await twoFactor.disable(await User.findByOrFail('email', EMAIL), PASSWORD)
    const after = await User.findByOrFail('email', EMAIL)
    assert.deepEqual(
      [after.totpSecret, after.totpEnabledAt, after.recoveryCodes],
      [null, null, null]
    )
    assert.isFalse(await twoFactor.verify(after, hotp(key, STEP + 1), NOW + 30_000))
    const actions = (
      await db.from('audit_log').where('subject_type', 'user').orderBy('id').select('action')
    ).map((row) => row.action)
    assert.deepEqual(actions.slice(-2), ['user.2fa_enable', 'user.2fa_disable'])
    assert.notInclude(JSON.stringify(await db.from('audit_log').select('*')), key.toString('hex'))
  })
})
