/**
 * Progress of a long operator command (chains:scan, callbacks:deliver,
 * orders:expire, a backfill): at most one line per `intervalMs` on stderr
 * (stdout keeps the command's result), with the counts so far and the
 * rate. On a terminal the line is rewritten in place; in a log (CI, a
 * pipe) each update is its own line.
 */
export class Progress {
  #started = performance.now()
  #lastPrint = 0
  #printedInPlace = false

  constructor(
    readonly label: string,
    readonly options: {
      intervalMs?: number
      write?: (text: string) => void
      /** Rewrite one line (a terminal) or print one line per update. */
      inPlace?: boolean
      /** Which count the per-second rate is of. */
      rateOf?: string
    } = {}
  ) {}

  get #write() {
    return this.options.write ?? ((text: string) => process.stderr.write(text))
  }

  get #inPlace() {
    return this.options.inPlace ?? Boolean(process.stderr.isTTY)
  }

  /** Reports `counts` (totals so far); printed when the interval has passed. */
  update(counts: Record<string, number>, force = false) {
    const now = performance.now()
    if (!force && now - this.#lastPrint < (this.options.intervalMs ?? 1000)) return
    this.#lastPrint = now
    const line = this.#line(counts, now)
    if (this.#inPlace) {
      this.#write(`\r\x1b[2K${line}`)
      this.#printedInPlace = true
    } else this.#write(`${line}\n`)
  }

  /** The final line (always printed). */
  done(counts: Record<string, number>) {
    this.update(counts, true)
    if (this.#printedInPlace) this.#write('\n')
  }

  #line(counts: Record<string, number>, now: number): string {
    const seconds = (now - this.#started) / 1000
    const parts = Object.entries(counts).map(
      ([name, value]) => `${value.toLocaleString('en-US')} ${name}`
    )
    const rateKey = this.options.rateOf ?? Object.keys(counts)[0]
    const rate =
      rateKey !== undefined && seconds > 0
        ? ` · ${Math.round((counts[rateKey] ?? 0) / seconds)}/s`
        : ''
    return `${this.label}: ${parts.join(', ')} · ${seconds.toFixed(1)} s${rate}`
  }
}
