/*
|--------------------------------------------------------------------------
| HTTP server entry point (`npm start`)
|--------------------------------------------------------------------------
|
| Serves HTTP and, unless RUN_JOBS=false, runs the background jobs in the
| same process. Before listening it migrates the database and installs the
| defaults, so a fresh clone needs nothing but `npm ci && npm start`.
|
| SIGTERM / SIGINT: /health/ready turns 503, the listener closes, idle
| keep-alive connections are closed and the answers still to come carry
| `Connection: close`; every request in flight is answered (those waiting
| for a database connection included), then the jobs stop (the job in hand
| finishes, leases are released), the database pool closes and the process
| exits 0. A second signal exits at once (128 + signal number: 143 for
| SIGTERM, 130 for SIGINT). README "Operations".
*/
import 'reflect-metadata'
import { createServer, type ServerOptions } from 'node:http'
import { Ignitor, prettyPrintError } from '@adonisjs/core'
import { GracefulHttp } from '#support/http/graceful_http'
import { beginShutdown } from '#support/runtime/shutdown'

const APP_ROOT = new URL('../', import.meta.url)

const IMPORTER = (filePath: string) => {
  if (filePath.startsWith('./') || filePath.startsWith('../')) {
    return import(new URL(filePath, APP_ROOT).href)
  }
  return import(filePath)
}

process.env.NODE_ENV ??= 'production'

/** Header, request and keep-alive timeouts, read from the env once it is loaded. */
let serverOptions: ServerOptions = {}

const graceful = new GracefulHttp()

/** A shutdown that has not ended by then ends the process anyway (a request stuck for good). */
const SHUTDOWN_LIMIT_MS = 60_000
const SIGNAL_NUMBERS: Record<string, number> = { SIGINT: 2, SIGTERM: 15 }
/** How long idle keep-alive connections may still bring a request once the listener is closed. */
const KEEP_ALIVE_GRACE_MS = 500

new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => {
    app.booting(async () => {
      await import('#start/env')
      const { httpServerOptions } = await import('#support/http/http_server_options')
      serverOptions = httpServerOptions()
      const { metrics } = await import('#support/runtime/metrics')
      graceful.onCount = (inFlight) => metrics.httpRequestsInFlight.set(inFlight)
    })
    app.starting(async () => {
      const { default: installation } = await import('#services/installation_service')
      // First-start secrets go to the terminal (stderr), not to stdout where
      // the JSON log lines go: a log collector must not keep them.
      await installation.prepare({ print: (line) => process.stderr.write(`${line}\n`) })
    })
    app.terminating(async () => {
      // After the jobs (hooks run in reverse order): SQLite's writer thread, its writes answered.
      const { sqliteWriter } = await import('#services/prepared_statements')
      await sqliteWriter.close()
    })
    app.terminating(async () => {
      const { stopJobs } = await import('#jobs/job_worker')
      await stopJobs()
    })
    app.ready(async () => {
      const { default: env } = await import('#start/env')
      if (env.get('RUN_JOBS') === false) return
      const { startJobs } = await import('#jobs/job_worker')
      await startJobs(app)
    })
    // Both stop the process gracefully (see the top of this file); a
    // second one exits at once.
    let stopping = false
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write(`${signal} received again: exiting now\n`)
        process.exit(128 + (SIGNAL_NUMBERS[signal] ?? 1))
      }
      stopping = true
      beginShutdown()
      void import('@adonisjs/core/services/logger').then(({ default: logger }) =>
        logger.info(
          { signal, in_flight: graceful.inFlight },
          'shutting down: finishing the requests in flight'
        )
      )
      setTimeout(() => {
        process.stderr.write(`shutdown did not end within ${SHUTDOWN_LIMIT_MS / 1000} s: exiting\n`)
        process.exit(1)
      }, SHUTDOWN_LIMIT_MS).unref()
      // The listener closes now; answers still to come close their
      // connection. Then app.terminate(): the HTTP server's own terminating
      // hook runs first (hooks run in reverse order) and waits for every
      // connection, then the jobs stop, then the providers (the database
      // pool) shut down.
      graceful.drain()
      // A moment for requests already written on idle keep-alive connections
      // to arrive (they are answered, with Connection: close); the server's
      // close() then closes the connections still idle.
      setTimeout(() => terminate(), KEEP_ALIVE_GRACE_MS)
    }
    const terminate = () => {
      graceful.closeIdle()
      app
        .terminate()
        .then(() => {
          // Nothing of ours is left; a handle of a library must not hold the exit.
          setTimeout(() => process.exit(), 1000).unref()
        })
        .catch((error) => {
          process.exitCode = 1
          prettyPrintError(error)
        })
    }
    app.listen('SIGTERM', onSignal)
    app.listen('SIGINT', onSignal)
  })
  .httpServer()
  .start((handler) => graceful.attach(createServer(serverOptions, graceful.wrap(handler))))
  .catch((error) => {
    process.exitCode = 1
    prettyPrintError(error)
  })
