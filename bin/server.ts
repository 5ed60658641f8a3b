/*
|--------------------------------------------------------------------------
| HTTP server entry point (`npm start`)
|--------------------------------------------------------------------------
|
| Serves HTTP and, unless RUN_JOBS=false, runs the background jobs in the
| same process. Before listening it migrates the database and installs the
| defaults, so a fresh clone needs nothing but `npm ci && npm start`.
*/
import 'reflect-metadata'
import { createServer, type ServerOptions } from 'node:http'
import { Ignitor, prettyPrintError } from '@adonisjs/core'

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

new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => {
    app.booting(async () => {
      await import('#start/env')
      const { httpServerOptions } = await import('#support/http_server_options')
      serverOptions = httpServerOptions()
    })
    app.starting(async () => {
      const { default: installation } = await import('#services/installation_service')
      // First-start secrets go to the terminal (stderr), not to stdout where
      // the JSON log lines go: a log collector must not keep them.
      await installation.prepare({ print: (line) => process.stderr.write(`${line}\n`) })
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
    // Both stop the process gracefully: in-flight requests finish, the
    // database connections are closed.
    app.listen('SIGTERM', () => app.terminate())
    app.listen('SIGINT', () => app.terminate())
  })
  .httpServer()
  .start((handler) => createServer(serverOptions, handler))
  .catch((error) => {
    process.exitCode = 1
    prettyPrintError(error)
  })
