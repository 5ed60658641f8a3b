import { createHash } from 'node:crypto'

/** Values as text (UTF-8) or as the bytes a shop sent (a GBK name stays GBK). */
export type CompatSignable = Record<string, string | Buffer | null | undefined>

const EXCLUDED = new Set(['sign', 'sign_type'])
const AMPERSAND = Buffer.from('&')
const EQUALS = Buffer.from('=')

function bytesOf(value: string | Buffer): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value
}

/**
 * Compat (EPay) signature: every parameter but `sign` and `sign_type`,
 * non-empty, sorted by name in byte order, joined as `name=value` with
 * `&` (values as sent, not URL-encoded), the secret appended directly, MD5
 * in lower-case hex. Computed on bytes, so that a value sent in GBK is
 * checked on the very bytes the shop signed; for text it is the canonical
 * string of #support/crypto/signing with the secret appended.
 */
export function compatSignature(params: CompatSignable, secretKey: string): string {
  const names = Object.keys(params)
    .filter((name) => !EXCLUDED.has(name))
    .filter((name) => {
      const value = params[name]
      return value !== null && value !== undefined && value.length > 0
    })
    .sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')))

  const hash = createHash('md5')
  names.forEach((name, index) => {
    if (index > 0) hash.update(AMPERSAND)
    hash.update(Buffer.from(name, 'utf8'))
    hash.update(EQUALS)
    hash.update(bytesOf(params[name]!))
  })
  hash.update(Buffer.from(secretKey, 'utf8'))
  return hash.digest('hex')
}
