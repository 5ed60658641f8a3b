import { MASK, maskSecret, redactSecrets } from '#support/http/redaction'

/** Never even partly shown: a hint of a password or a TOTP secret helps guessing it. */
const HIDDEN = /password|totp|recovery/i
/** Shown as redaction.ts shows them in listings (the last 4 characters of a long one). */
const SECRET = /secret|api_?key|shop_token|token_secret/i

function alreadyMasked(value: string) {
  return value === '' || value === MASK || value.startsWith('…')
}

/**
 * A before/after snapshot as it may be stored: fields named like a secret
 * masked (unless the service masked them already), credentials in URLs
 * masked wherever a string holds one. The last line of defence: services
 * mask their secrets themselves, this catches the one they forgot.
 */
export function maskForAudit(value: unknown, key = ''): unknown {
  if (value === null || value === undefined) return value ?? null
  if (typeof value === 'string') {
    if (HIDDEN.test(key)) return value === '' ? '' : MASK
    if (SECRET.test(key)) return alreadyMasked(value) ? value : maskSecret(value)
    return redactSecrets(value)
  }
  if (Array.isArray(value)) return value.map((item) => maskForAudit(item, key))
  if (typeof value === 'object') {
    const masked: Record<string, unknown> = {}
    for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
      masked[name] = maskForAudit(item, name)
    }
    return masked
  }
  return value
}
