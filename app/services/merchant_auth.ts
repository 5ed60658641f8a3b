import { randomBytes } from 'node:crypto'
import { HttpContext } from '@adonisjs/core/http'
import logger from '@adonisjs/core/services/logger'
import db from '@adonisjs/lucid/services/db'
import type ApiKey from '#models/api_key'
import configCache from '#services/config_cache'
import BusinessError from '#exceptions/business_error'
import { allowListIncludes } from '#support/http/ip_allowlist'
import { hexDigestsEqual, type SignableParams } from '#support/crypto/signing'

/** last_used_at is refreshed at most this often, to keep writes rare. */
const TOUCH_INTERVAL_MS = 60_000

/**
 * The one answer to every refused merchant request, whatever the reason:
 * a caller must not learn whether a pid exists, is disabled or is
 * restricted to other IPs. The log line says which check failed.
 */
export const AUTH_FAILED_MESSAGE = 'Signature verification failed'

/**
 * The 401's hint: which algorithm signs, over which of the request's own
 * fields (those sent non-empty, but the signature's), sorted as they are
 * joined. It names nothing the caller did not send and never the value the
 * gateway expected; it is the same for an unknown pid and a wrong
 * signature.
 */
export function signingHint(
  algorithm: string,
  params: Record<string, unknown>,
  unsigned: string[]
): string {
  const names = Object.keys(params)
    .filter(
      (name) =>
        !unsigned.includes(name) &&
        params[name] !== undefined &&
        params[name] !== null &&
        params[name] !== ''
    )
    .sort()
    .map((name) => name.slice(0, 64))
    .slice(0, 40)
  return `requests are signed with ${algorithm}, over the sorted name=value pairs of the non-empty fields joined by & (here: ${names.join(', ') || 'none'})`
}

export type AuthRefusal = 'unknown_pid' | 'key_disabled' | 'ip_not_allowed' | 'bad_signature'

const REFUSAL_TEXT: Record<AuthRefusal, string> = {
  unknown_pid: 'unknown pid',
  key_disabled: 'the API key is disabled',
  ip_not_allowed: 'the client IP is not in the key allow-list',
  bad_signature: 'the signature does not match',
}

/** Signs in place of a missing key, so an unknown pid costs the same work. */
const STAND_IN_SECRET = randomBytes(32).toString('hex')

/**
 * Finds the API key of a merchant request by `pid` and checks that it may
 * be used: active, from an allowed IP, correctly signed. Every refusal is
 * the same 401; every check is made whatever the outcome of the others, so
 * neither the answer nor its time tells which one failed.
 */
export class MerchantAuth {
  async authenticate(
    params: SignableParams,
    clientIp: string,
    verify: {
      field: string
      expected: (secretKey: string) => string
      /** How this flavour signs, added to every 401 (signingHint): the same whatever failed. */
      hint?: string
    }
  ): Promise<ApiKey> {
    const pid = params.pid
    if (pid === undefined || pid === null || pid === '') {
      throw BusinessError.parameter(
        'The pid field is required: every request names its merchant by the pid of an API key (1000 on a new installation)'
      )
    }
    const given = params[verify.field]
    if (given === undefined || given === null || given === '') {
      throw BusinessError.signature(
        `The ${verify.field} field is required${verify.hint ? `; ${verify.hint}` : ''}`
      )
    }

    const apiKey = await configCache.apiKeyByPid(String(pid))
    const signed = hexDigestsEqual(
      verify.expected(apiKey ? configCache.signingSecret(apiKey) : STAND_IN_SECRET),
      given
    )
    const refusal: AuthRefusal | null = !apiKey
      ? 'unknown_pid'
      : !apiKey.isActive
        ? 'key_disabled'
        : !this.ipAllowed(apiKey, clientIp)
          ? 'ip_not_allowed'
          : !signed
            ? 'bad_signature'
            : null
    if (refusal) {
      // The request's logger carries its request id.
      const log = HttpContext.get()?.logger ?? logger
      log.warn(
        { pid: String(pid).slice(0, 64), ip: clientIp, reason: refusal },
        `merchant request refused: ${REFUSAL_TEXT[refusal]}`
      )
      throw BusinessError.signature(
        verify.hint ? `${AUTH_FAILED_MESSAGE}: ${verify.hint}` : AUTH_FAILED_MESSAGE
      )
    }

    await this.#touch(apiKey!)
    return apiKey!
  }

  ipAllowed(apiKey: ApiKey, ip: string): boolean {
    return allowListIncludes(apiKey.allowedIps, ip)
  }

  /** When this process last wrote last_used_at, by key id. */
  #touched = new Map<number, number>()

  /**
   * The key comes from the shared configuration cache: it is not saved
   * (that would empty the cache), last_used_at is written by one UPDATE
   * at most every TOUCH_INTERVAL_MS per key and process.
   */
  async #touch(apiKey: ApiKey) {
    const now = Date.now()
    const last = Math.max(this.#touched.get(apiKey.id) ?? 0, apiKey.lastUsedAt ?? 0)
    if (last > 0 && now - last < TOUCH_INTERVAL_MS) return
    this.#touched.set(apiKey.id, now)
    await db.from('api_keys').where('id', apiKey.id).update({ last_used_at: now })
  }
}

const merchantAuth = new MerchantAuth()
export default merchantAuth
