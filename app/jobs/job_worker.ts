import type { ApplicationService } from '@adonisjs/core/types'
import logger from '@adonisjs/core/services/logger'
import { Worker } from 'adonisjs-scheduler'
import jobRunner from '#jobs/job_runner'
import chainWatch from '#chains/chain_watch'
import { callbackDelivery } from '#callbacks/delivery_loop'

let worker: Worker | null = null
let state: 'idle' | 'starting' | 'running' | 'stopped' = 'idle'

/**
 * Starts the scheduler (start/scheduler.ts) in this process: used by
 * `npm start` (unless RUN_JOBS=false) and by `node ace scheduler:run`.
 * A stop requested while starting wins: the worker is stopped again at
 * once, so a process asked to exit never keeps running jobs.
 */
export async function startJobs(app: ApplicationService) {
  if (state !== 'idle') return
  state = 'starting'
  const started = new Worker(app)
  await started.start()
  if (state !== 'starting' || app.isTerminating) {
    await started.stop()
    return
  }
  worker = started
  state = 'running'
  await chainWatch.start()
  await callbackDelivery.start()
  logger.info('background jobs started')
}

/** Stops scheduling and lets running jobs finish. */
export async function stopJobs() {
  const running = worker
  const wasRunning = state === 'running'
  state = 'stopped'
  worker = null
  if (running) await running.stop()
  await Promise.all([callbackDelivery.stop(), jobRunner.drain(), chainWatch.stop()])
  if (wasRunning) logger.info('background jobs stopped')
}
