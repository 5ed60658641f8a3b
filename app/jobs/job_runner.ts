import logger from '@adonisjs/core/services/logger'

/**
 * Runs the background jobs: at most one run of each job at a time in this
 * process, errors logged (never thrown into the scheduler), and a drain on
 * shutdown so that a delivery in flight finishes before the database
 * connections close. Safety across processes comes from the jobs
 * themselves (row claims), not from here.
 */
export class JobRunner {
  #running = new Map<string, Promise<void>>()
  #stopping = false

  run(name: string, job: () => Promise<unknown>): Promise<void> {
    if (this.#stopping || this.#running.has(name)) return Promise.resolve()
    const started = Date.now()
    const promise = job()
      .then((result) => {
        if (result && typeof result === 'object' && Object.values(result).some((value) => value)) {
          logger.debug({ job: name, ms: Date.now() - started, result }, 'job ran')
        }
      })
      .catch((error) => logger.error({ err: error, job: name }, 'job failed'))
      .finally(() => this.#running.delete(name))
    this.#running.set(name, promise)
    return promise
  }

  /** Stops starting jobs and waits (up to `timeoutMs`) for running ones. */
  async drain(timeoutMs = 15_000) {
    this.#stopping = true
    const running = Promise.allSettled(this.#running.values())
    await Promise.race([running, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())])
  }
}

const jobRunner = new JobRunner()
export default jobRunner
