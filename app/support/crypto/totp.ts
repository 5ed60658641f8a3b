import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP): what
 * authenticator apps compute from a shared secret. 30 s steps, 6 digits,
 * HMAC-SHA1 (the only algorithm every app supports).
 */
export const TOTP_STEP_SECONDS = 30
export const TOTP_DIGITS = 6
/** Steps accepted either side of now: a phone clock a little off, a code typed as it rolls over. */
const DRIFT_STEPS = 1

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 base32 without padding: how authenticator apps take the secret. */
export function base32Encode(bytes: Buffer): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return out
}

/** Decodes base32 (case, spaces and padding tolerated: a key typed by hand); null when not base32. */
export function base32Decode(text: string): Buffer | null {
  const clean = text.replace(/[\s=]/g, '').toUpperCase()
  if (clean === '' || /[^A-Z2-7]/.test(clean)) return null
  let bits = 0
  let value = 0
  const out: number[] = []
  for (const char of clean) {
    value = (value << 5) | BASE32.indexOf(char)
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** A new shared secret: 160 bits (RFC 4226's recommended length for SHA-1), base32. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20))
}

/** RFC 4226 HOTP: HMAC of the 8-byte counter, dynamically truncated to `digits` digits. */
export function hotp(
  key: Buffer,
  counter: number,
  digits = TOTP_DIGITS,
  algorithm = 'sha1'
): string {
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac(algorithm, key).update(message).digest()
  const offset = mac[mac.length - 1] & 0x0f
  const binary = mac.readUInt32BE(offset) & 0x7fffffff
  return String(binary % 10 ** digits).padStart(digits, '0')
}

/** The time step of an instant (epoch ms). */
export function totpStep(nowMs: number): number {
  return Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS)
}

/** The code of the step containing `nowMs`. */
export function totpCode(
  key: Buffer,
  nowMs: number,
  digits = TOTP_DIGITS,
  algorithm = 'sha1'
): string {
  return hotp(key, totpStep(nowMs), digits, algorithm)
}

/**
 * The step the code belongs to when it is valid now (±1 step) and newer
 * than `lastStep` (the step last accepted for this secret), else null.
 * Refusing a step at or before the last one makes each code single-use,
 * and an older code unusable once a newer one was accepted.
 */
export function matchTotp(
  key: Buffer,
  code: string,
  nowMs: number,
  lastStep: number | null
): number | null {
  const given = code.replace(/\s/g, '')
  if (!new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(given)) return null
  const current = totpStep(nowMs)
  let matched: number | null = null
  // Every candidate is computed and compared: the time taken does not tell which step matched.
  for (let step = current - DRIFT_STEPS; step <= current + DRIFT_STEPS; step++) {
    const equal = timingSafeEqual(Buffer.from(hotp(key, step)), Buffer.from(given))
    if (equal && matched === null && (lastStep === null || step > lastStep)) matched = step
  }
  return matched
}

/** The otpauth:// URI an authenticator app reads from the QR code. */
export function otpauthUri(issuer: string, account: string, secret: string): string {
  const label = encodeURIComponent(`${issuer}:${account}`)
  const params = new URLSearchParams({
    secret,
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  })
  return `otpauth://totp/${label}?${params.toString()}`
}
