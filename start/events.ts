/*
|--------------------------------------------------------------------------
| Event listeners
|--------------------------------------------------------------------------
*/
import emitter from '@adonisjs/core/services/emitter'
import { metrics } from '#support/metrics'

// One access-log line per request, once the response has been sent (so the
// status is the final one), carrying the request id.
emitter.on('http:request_completed', ({ ctx, duration }) => {
  const seconds = duration[0] + duration[1] / 1e9
  const ms = Math.round(seconds * 1e4) / 10
  // By route pattern, never the URL (trade ids would make unbounded labels);
  // a request no route matched (404, static files) is `unmatched`.
  metrics.httpRequestDuration.observe(
    {
      method: ctx.request.method(),
      route: ctx.route?.pattern ?? 'unmatched',
      status: String(ctx.response.getStatus()),
    },
    seconds
  )
  ctx.logger.info(
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
