import type { ApplicationService } from '@adonisjs/core/types'
import logger from '@adonisjs/core/services/logger'
import { Worker } from 'adonisjs-scheduler'
import jobRunner from '#jobs/job_runner'
import chainWatch from '#chains/chain_watch'
import { callbackDelivery } from '#callbacks/delivery_loop'
import { notificationDelivery } from '#notifications/notification_delivery'

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
  notificationDelivery.start()
  logger.info('background jobs started')
}

/**
 * Stops scheduling and lets running jobs finish (their leases released by
 * the jobs themselves). Every stop is awaited, and one that fails does not
 * keep the others from running: a loop added here gets its own line.
 */
export async function stopJobs() {
  const running = worker
  const wasRunning = state === 'running'
  state = 'stopped'
  worker = null
  await stopStep('scheduler', () => running?.stop())
  await Promise.all([
    stopStep('callback delivery', () => callbackDelivery.stop()),
    stopStep('notification delivery', () => notificationDelivery.stop()),
    stopStep('running jobs', () => jobRunner.drain()),
    stopStep('chain watches', () => chainWatch.stop()),
  ])
  if (wasRunning) logger.info('background jobs stopped')
}

async function stopStep(name: string, stop: () => unknown) {
  try {
    await stop()
  } catch (error) {
    logger.error({ err: error, step: name }, 'stopping the background jobs: a step failed')
  }
}
