/*
|--------------------------------------------------------------------------
| Event listeners
|--------------------------------------------------------------------------
*/
import emitter from '@adonisjs/core/services/emitter'
import { metrics } from '#support/runtime/metrics'

/** Probes and scrapes come every few seconds: their successful answers are logged at debug level. */
const QUIET_ROUTES = new Set(['/health/live', '/health/ready', '/metrics'])

// One access-log line per request, once the response has been sent (so the
// status is the final one), carrying the request id.
emitter.on('http:request_completed', ({ ctx, duration }) => {
  const seconds = duration[0] + duration[1] / 1e9
  const ms = Math.round(seconds * 1e4) / 10
  // By route pattern, never the URL (trade ids would make unbounded labels);
  // a request no route matched (404, static files) is `unmatched`.
  const route = ctx.route?.pattern ?? 'unmatched'
  const status = ctx.response.getStatus()
  metrics.httpRequestDuration.observe(
    { method: ctx.request.method(), route, status: String(status) },
    seconds
  )
  const level = QUIET_ROUTES.has(route) && status < 400 ? 'debug' : 'info'
  ctx.logger[level](
    {
      method: ctx.request.method(),
      url: ctx.request.url(),
      status: ctx.response.getStatus(),
      ms,
      ip: ctx.request.ip(),
    },
    'request completed'
  )
})
