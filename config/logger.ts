import env from '#start/env'
import app from '@adonisjs/core/services/app'
import { defineConfig, destination, targets } from '@adonisjs/core/logger'
import { redactLogFields, redactSecrets, serializeError } from '#support/http/redaction'

const loggerConfig = defineConfig({
  default: 'app',
  loggers: {
    app: {
      enabled: true,
      name: 'crypto-pay-gateway',
      level: env.get('LOG_LEVEL', 'info'),
      // Errors are logged without their attached objects and with URL
      // credentials masked: an RPC client's error quotes a URL that may
      // carry an API key, or its request config with the key header.
      serializers: { err: (error: unknown) => serializeError(error) },
      // Every URL in a log line is redacted too, in its fields and its
      // message: a compat callback's URL carries its `sign`, a merchant's
      // notify_url may carry user info or a token, an RPC URL its key.
      formatters: { log: (fields: Record<string, unknown>) => redactLogFields(fields) },
      hooks: {
        logMethod(args: unknown[], method: (...args: unknown[]) => void) {
          return method.apply(
            this,
            args.map((arg) =>
              typeof arg === 'string' && arg.includes('://') ? redactSecrets(arg) : arg
            )
          )
        },
      },
      // In development, pino-pretty (a transport: a thread of its own). Elsewhere,
      // JSON lines written to stdout from this thread (SonicBoom, asynchronous,
      // flushed on exit): a transport would start a worker thread, another V8
      // heap of about 10 MB, only to copy the lines to the same file descriptor.
      ...(app.inDev
        ? { transport: { targets: targets().push(targets.pretty()).toArray() } }
        : { destination: destination({ dest: 1, sync: false }) }),
    },
  },
})

export default loggerConfig

declare module '@adonisjs/core/types' {
  export interface LoggersList extends InferLoggers<typeof loggerConfig> {}
}
