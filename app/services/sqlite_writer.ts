import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { SQLITE_PRAGMAS } from '#support/database/sqlite_pragmas'

/** A statement and its values. */
export type SqliteStep = { sql: string; bindings: (string | number)[] }

/** The second statement of a write: a value is either given or taken from the first statement's row (`{ fromRow: column }`). */
export type SqliteFollowUp = { sql: string; bindings: (string | number | { fromRow: string })[] }

/** What the thread answers for one write. */
type Reply = {
  id: number
  row?: Record<string, unknown> | null
  error?: { message: string; code?: string }
  /** The statements it ran for this write besides the two given: before them (BEGIN, SAVEPOINT) and after (RELEASE, ROLLBACK, COMMIT). */
  before: string[]
  after: string[]
}

type Pending = {
  resolve: (row: Record<string, unknown> | null) => void
  reject: (error: Error) => void
  write: { first: SqliteStep; next: SqliteFollowUp }
}

/** Writes handed to one transaction at most (bounds how long the write lock is held: ~0.1 ms each). */
const MAX_BATCH = 64

/**
 * The thread's code (plain JavaScript, run with `eval`, so it needs no
 * TypeScript loader and no file of the build): its own better-sqlite3
 * connection to the same database file, with the pragmas of every
 * connection (SQLITE_PRAGMAS), and statements prepared once.
 *
 * Writes that arrive while it works are taken together: one BEGIN
 * IMMEDIATE … COMMIT for all of them (group commit: the pages they share,
 * the ends of the time-ordered indexes above all, go to the WAL once), each
 * in its own SAVEPOINT, so a write that fails (a duplicate order number)
 * is undone alone and answered with its error while the others commit.
 * Nothing is answered before COMMIT has returned; when COMMIT fails, or a
 * failure ends the transaction itself, every write of the batch is
 * answered with that error (none of them is kept).
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.filename)
for (const pragma of workerData.pragmas) db.pragma(pragma)
const cache = new Map()
function prepare(sql) {
  let statement = cache.get(sql)
  if (!statement) {
    if (cache.size >= 64) cache.clear()
    statement = db.prepare(sql)
    cache.set(sql, statement)
  }
  return statement
}
function describe(error) {
  return { message: String(error && error.message || error), code: error && error.code }
}
function runOne(write) {
  const row = prepare(write.first.sql).all(write.first.bindings)[0] || null
  if (row) {
    const bindings = write.next.bindings.map((value) => (value !== null && typeof value === 'object' ? row[value.fromRow] : value))
    prepare(write.next.sql).run(bindings)
  }
  return row
}
let queue = []
let scheduled = false
function flush() {
  scheduled = false
  const batch = queue.splice(0, ${MAX_BATCH})
  if (queue.length > 0) schedule()
  const single = batch.length === 1
  const replies = batch.map((write) => ({ id: write.id, before: [], after: [] }))
  try {
    prepare('BEGIN IMMEDIATE').run()
    replies[0].before.push('BEGIN IMMEDIATE')
  } catch (error) {
    for (const reply of replies) reply.error = describe(error)
    parentPort.postMessage(replies)
    return
  }
  let failure = null
  batch.forEach((write, index) => {
    if (failure) return
    const reply = replies[index]
    try {
      if (single) {
        reply.row = runOne(write)
        return
      }
      prepare('SAVEPOINT w').run()
      reply.before.push('SAVEPOINT w')
      reply.row = runOne(write)
      prepare('RELEASE w').run()
      reply.after.push('RELEASE w')
    } catch (error) {
      reply.row = undefined
      reply.error = describe(error)
      // Alone in its transaction (or the failure ended the transaction): all of it is rolled back.
      if (single || !db.inTransaction) {
        failure = error
        return
      }
      db.exec('ROLLBACK TO w; RELEASE w')
      reply.after.push('ROLLBACK TO w', 'RELEASE w')
    }
  })
  const last = replies[replies.length - 1]
  if (!failure) {
    try {
      prepare('COMMIT').run()
      last.after.push('COMMIT')
    } catch (error) {
      failure = error
    }
  }
  if (failure) {
    if (db.inTransaction) {
      db.exec('ROLLBACK')
      last.after.push('ROLLBACK')
    }
    const described = describe(failure)
    for (const reply of replies) {
      reply.row = undefined
      reply.error = described
    }
  }
  parentPort.postMessage(replies)
}
function schedule() {
  if (scheduled) return
  scheduled = true
  setImmediate(flush)
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close()
    process.exit(0)
  }
  // An array: writes held back together (SqliteWriter.hold), queued at once so they share a batch.
  if (Array.isArray(message)) queue.push(...message)
  else queue.push(message)
  schedule()
})
`

type HeldWrite = { id: number; first: SqliteStep; next: SqliteFollowUp }

type Reporter = (sql: string, bindings?: unknown[]) => void

/**
 * SQLite's order-creation writes, on a thread of their own.
 *
 * better-sqlite3 is synchronous: on the HTTP thread, every statement and
 * every COMMIT (the WAL frames of the ~25 pages an order and its lock
 * touch) stops all other requests while it runs; it was 55 % of the
 * create's CPU time on that thread. Here the thread only sends the two
 * statements and awaits the answer, and the writes of concurrent creates
 * are committed together (see THREAD_SOURCE).
 *
 * The thread's connection is a second connection to the same file, like
 * another process's: BEGIN IMMEDIATE takes SQLite's write lock (the HTTP
 * thread's own writes and other processes wait for it, busy_timeout), and
 * a write it commits is seen by every later read. It is started on the
 * first write and stopped by close() (the server's shutdown, after the
 * requests in flight).
 */
export class SqliteWriter {
  #worker: Worker | null = null
  #pending = new Map<number, Pending>()
  #nextId = 1
  /** Called by close() when the last pending write is answered. */
  #drained: (() => void) | null = null
  /** Writes kept back while held (hold()), handed to the thread together on release. */
  #held: HeldWrite[] | null = null

  constructor(
    private readonly filename: () => string,
    private readonly report: Reporter
  ) {}

  /**
   * Runs `first`, then, when it returned a row, `next` with that row's
   * values, in one transaction; resolves with the first row, or null
   * (nothing written) when `first` returned none. Rejects with the
   * database's error (its `code` kept) and nothing written.
   */
  write(first: SqliteStep, next: SqliteFollowUp): Promise<Record<string, unknown> | null> {
    const worker = this.#start()
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      // Held open while a write waits for its answer (a script awaiting one must not exit), not when idle.
      if (this.#pending.size === 0) worker.ref()
      this.#pending.set(id, { resolve, reject, write: { first, next } })
      if (this.#held) this.#held.push({ id, first, next })
      else worker.postMessage({ id, first, next })
    })
  }

  /**
   * Keeps the writes handed from now on back from the thread until the
   * returned function is called; they then reach it in one message and so
   * share one transaction (up to its batch size). What group commit does
   * under load, made certain: a caller that must know which writes go
   * together (a test of the batch's rules) holds, writes, releases.
   */
  hold(): () => void {
    if (this.#held) throw new Error('the SQLite writer is already held')
    const held: HeldWrite[] = []
    this.#held = held
    return () => {
      if (this.#held !== held) return
      this.#held = null
      if (held.length > 0) this.#start().postMessage(held)
    }
  }

  /** Writes handed to the thread and not answered yet. */
  get pending(): number {
    return this.#pending.size
  }

  /** Stops the thread once the writes handed to it are answered. */
  async close() {
    const worker = this.#worker
    if (!worker) return
    // Writes still held are handed over: close() answers every write handed before it.
    const held = this.#held
    this.#held = null
    if (held && held.length > 0) worker.postMessage(held)
    if (this.#pending.size > 0) await new Promise<void>((resolve) => (this.#drained = resolve))
    this.#worker = null
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.postMessage('close')
    await exited
  }

  #start(): Worker {
    if (this.#worker) return this.#worker
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      execArgv: [],
      // Its objects are a batch's parameters and answers: a young generation
      // of a few MB holds them, where V8's default would grow to tens of MB
      // of resident memory under a write load.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
      workerData: {
        filename: this.filename(),
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        pragmas: SQLITE_PRAGMAS,
      },
    })
    worker.on('message', (replies: Reply[]) => {
      for (const reply of replies) this.#settle(reply)
    })
    const lost = (error: Error) => {
      if (this.#worker === worker) this.#worker = null
      for (const [id, pending] of this.#pending) {
        this.#pending.delete(id)
        pending.reject(error)
      }
      this.#drain()
    }
    worker.on('error', lost)
    worker.on('exit', (code) => {
      if (this.#pending.size > 0)
        lost(new Error(`the SQLite writer thread exited (code ${code}) before answering`))
      else if (this.#worker === worker) this.#worker = null
    })
    // An idle thread never holds the process open (close() ends it on shutdown).
    // After the listeners: adding a 'message' listener refs the worker again.
    worker.unref()
    this.#worker = worker
    return worker
  }

  #settle(reply: Reply) {
    const pending = this.#pending.get(reply.id)
    if (!pending) return
    this.#pending.delete(reply.id)
    const { first, next } = pending.write
    for (const sql of reply.before) this.report(sql)
    this.report(first.sql, first.bindings)
    if (reply.row) this.report(next.sql, next.bindings)
    for (const sql of reply.after) this.report(sql)
    if (reply.error) {
      pending.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }))
    } else {
      pending.resolve(reply.row ?? null)
    }
    this.#drain()
  }

  #drain() {
    if (this.#pending.size > 0) return
    this.#worker?.unref()
    if (this.#drained) {
      this.#drained()
      this.#drained = null
    }
  }
}
