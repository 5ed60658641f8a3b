import type { HttpContext } from '@adonisjs/core/http'
import readiness from '#services/readiness'

/**
 * Probes for load balancers and Kubernetes (README "Operations"): no
 * authentication, no session, no rate limit, never cached by a proxy.
 */
export default class HealthController {
  /** The process is up and its event loop turns (no database involved). */
  async live({ response }: HttpContext) {
    response.header('cache-control', 'no-store')
    return response.status(200).json({ status: 'live' })
  }

  /**
   * The process can serve: the database answers, no migration is pending,
   * and it is not shutting down. 503 otherwise, saying which check failed.
   */
  async ready({ response }: HttpContext) {
    const result = await readiness.check()
    response.header('cache-control', 'no-store')
    return response
      .status(result.ready ? 200 : 503)
      .json({ status: result.ready ? 'ready' : 'unavailable', ...result })
  }
}
