/*
|--------------------------------------------------------------------------
| Event listeners
|--------------------------------------------------------------------------
*/
import emitter from '@adonisjs/core/services/emitter'

// One access-log line per request, once the response has been sent (so the
// status is the final one), carrying the request id.
emitter.on('http:request_completed', ({ ctx, duration }) => {
  const ms = Math.round((duration[0] * 1e3 + duration[1] / 1e6) * 10) / 10
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
