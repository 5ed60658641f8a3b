import type { ApplicationService } from '@adonisjs/core/types'
import logger from '@adonisjs/core/services/logger'
import { Worker } from 'adonisjs-scheduler'
import jobRunner from '#jobs/job_runner'

let worker: Worker | null = null

/**
 * Starts the scheduler (start/scheduler.ts) in this process: used by
 * `npm start` (unless RUN_JOBS=false) and by `node ace scheduler:run`.
 */
export async function startJobs(app: ApplicationService) {
  if (worker) return
  worker = new Worker(app)
  await worker.start()
  logger.info('background jobs started')
}

/** Stops scheduling and lets running jobs finish. */
export async function stopJobs() {
  if (!worker) return
  await worker.stop()
  worker = null
  await jobRunner.drain()
  logger.info('background jobs stopped')
}
