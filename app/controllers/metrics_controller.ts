import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { HttpContext } from '@adonisjs/core/http'
import settings from '#settings/settings_service'
import { registry } from '#support/runtime/metrics'
import { allowListIncludes, splitAllowList } from '#support/http/ip_allowlist'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'
import { registerDatabaseGauges } from '#services/metrics_gauges'

registerDatabaseGauges()

/** Who may scrape when neither a token nor an allow-list is set: this host only. */
const LOOPBACK = ['127.0.0.0/8', '::1/128']

/**
 * GET /metrics: the process's Prometheus series (app/support/runtime/metrics.ts).
 *
 * Access (settings `metrics.token`, `metrics.allowed_ips`):
 * - a token set: `Authorization: Bearer <token>` required (compared in
 *   constant time), else 401;
 * - an allow-list set: the client address (request.ip(), TRUST_PROXY-aware)
 *   must be in it, else 403;
 * - both set: both required; neither: loopback clients only (403 otherwise).
 * A refusal says nothing of what is configured.
 */
export default class MetricsController {
  async show({ request, response }: HttpContext) {
    response.header('cache-control', 'no-store')
    const token = await configuredToken()
    const allowed = splitAllowList(await settings.get('metrics.allowed_ips'))

    const ipList = allowed.length > 0 ? allowed : token === '' ? LOOPBACK : []
    if (ipList.length > 0 && !allowListIncludes(ipList, request.ip())) {
      return response
        .status(403)
        .header('content-type', 'text/plain; charset=utf-8')
        .send('Forbidden\n')
    }
    if (token !== '' && !bearerMatches(request.header('authorization'), token)) {
      return response
        .status(401)
        .header('www-authenticate', 'Bearer realm="metrics"')
        .header('content-type', 'text/plain; charset=utf-8')
        .send('Unauthorized\n')
    }

    const body = await registry.metrics()
    return response.status(200).header('content-type', registry.contentType).send(body)
  }
}

/** The token ('' when none); one that cannot be decrypted (APP_KEY changed) refuses every caller. */
async function configuredToken(): Promise<string> {
  const stored = await settings.get('metrics.token')
  try {
    return revealSecret(stored, SecretPurpose.setting('metrics.token'))
  } catch {
    return randomBytes(32).toString('hex')
  }
}

/** Constant time whatever the lengths: both sides are hashed first. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')
  const given = createHash('sha256')
    .update(match?.[1] ?? '')
    .digest()
  const expected = createHash('sha256').update(token).digest()
  return timingSafeEqual(given, expected) && match !== null
}
