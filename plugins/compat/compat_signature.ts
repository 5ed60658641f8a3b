import { canonicalString, md5Hex, type SignableParams } from '#support/signing'

/** Compat signature: MD5 of the canonical string with the secret appended. */
export function compatSignature(params: SignableParams, secretKey: string): string {
  return md5Hex(canonicalString(params, ['sign', 'sign_type']) + secretKey)
}
