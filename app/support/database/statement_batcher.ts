/**
 * Group commit for a database statement: jobs that arrive while the
 * database is busy with earlier ones are sent together, as one statement,
 * when a slot frees.
 *
 * - At most `maxInFlight` statements are out at a time. A job that finds a
 *   free slot is sent at once, alone (`one`): a lone request never waits.
 * - Jobs arriving while every slot is taken queue up; when a statement
 *   returns, the queue (up to `maxBatch` jobs, oldest first) goes out as
 *   one statement (`many`), whose answers are given back in order.
 * - If a batch fails as a whole, nothing of it was written (one statement
 *   is one transaction). When `retryAlone(error)` says so (a job of the
 *   batch broke a constraint, say), each job is sent again alone, in turn,
 *   and gets its own answer or its own error. Otherwise (the database
 *   cannot be reached) every job gets the batch's error at once, rather
 *   than each waiting for the same failure again.
 */
export type StatementBatcherOptions<J, R> = {
  maxInFlight: number
  maxBatch: number
  one: (job: J) => Promise<R>
  /** Answers in the order of `jobs`. */
  many: (jobs: J[]) => Promise<R[]>
  retryAlone: (error: unknown) => boolean
}

type Entry<J, R> = { job: J; resolve: (result: R) => void; reject: (error: unknown) => void }

export class StatementBatcher<J, R> {
  #queue: Entry<J, R>[] = []
  #inFlight = 0

  constructor(private readonly options: StatementBatcherOptions<J, R>) {}

  /** Jobs waiting for a slot (not yet sent). */
  get queued() {
    return this.#queue.length
  }

  /** Statements out now. */
  get inFlight() {
    return this.#inFlight
  }

  run(job: J): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ job, resolve, reject })
      this.#pump()
    })
  }

  #pump() {
    while (this.#inFlight < this.options.maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.options.maxBatch)
      this.#inFlight++
      void this.#send(batch).finally(() => {
        this.#inFlight--
        this.#pump()
      })
    }
  }

  async #send(batch: Entry<J, R>[]) {
    if (batch.length === 1) return this.#alone(batch[0])
    let results: R[]
    try {
      results = await this.options.many(batch.map((entry) => entry.job))
    } catch (error) {
      if (!this.options.retryAlone(error)) {
        for (const entry of batch) entry.reject(error)
        return
      }
      for (const entry of batch) await this.#alone(entry)
      return
    }
    batch.forEach((entry, index) => entry.resolve(results[index]))
  }

  async #alone(entry: Entry<J, R>) {
    try {
      entry.resolve(await this.options.one(entry.job))
    } catch (error) {
      entry.reject(error)
    }
  }
}
