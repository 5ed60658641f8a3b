/**
 * Per-endpoint request pacing and daily counting, shared by every pool of
 * the process: two pools of one endpoint and key (a scan and a
 * verification, two chains on one provider) draw from one budget, as the
 * provider counts them. State is per process and in memory: a restart
 * starts a new daily count (the provider's own quota answers 429 then,
 * which the pool treats as a limit, not an outage).
 */

export type PacerBudget = { perSecond: number; perDay: number | null }

type PacerState = {
  /** Earliest time the next request may start (epoch ms): a slot scheduler, one request per 1/perSecond. */
  nextSlot: number
  /** UTC day (YYYY-MM-DD) `count` is for. */
  day: string
  count: number
}

const states = new Map<string, PacerState>()

/**
 * The budget a request draws from: the endpoint and key, and the purpose
 * when it has a budget of its own ('' is the scanners' and the operators';
 * 'verify' is the payers' transaction-hash checks, which can then never
 * spend or slow the scanners' budget).
 */
export function pacerKey(url: string, apiKey: string, purpose = '') {
  return purpose ? `${url}\n${apiKey}\n${purpose}` : `${url}\n${apiKey}`
}

function utcDay(now: number) {
  return new Date(now).toISOString().slice(0, 10)
}

function stateOf(key: string, now: number): PacerState {
  let state = states.get(key)
  if (!state) {
    state = { nextSlot: 0, day: utcDay(now), count: 0 }
    states.set(key, state)
  }
  const day = utcDay(now)
  if (state.day !== day) {
    state.day = day
    state.count = 0
  }
  return state
}

/** Requests counted today for the key (diagnostics, tests). */
export function usedToday(key: string, now = Date.now()): number {
  return states.has(key) ? stateOf(key, now).count : 0
}

/** True when the daily budget of the key is spent for the current UTC day. */
export function dailyBudgetSpent(
  key: string,
  budget: PacerBudget | null,
  now = Date.now()
): boolean {
  return (
    budget?.perDay !== null && budget?.perDay !== undefined && usedToday(key, now) >= budget.perDay
  )
}

/**
 * Reserves the next slot of the key for `requests` requests (a batch)
 * and counts them; returns how long the caller must wait before sending.
 * Null when the daily budget is spent (nothing reserved). Slots are
 * spaced `requests`/perSecond apart with no burst: a provider's bucket that refills at perSecond never runs
 * dry, whatever its capacity, and callers are served in order.
 */
export function reserve(
  key: string,
  budget: PacerBudget | null,
  requests = 1,
  now = Date.now()
): number | null {
  const state = stateOf(key, now)
  // A batch larger than what is left today is refused whole: the provider would refuse its tail.
  if (
    budget?.perDay !== null &&
    budget?.perDay !== undefined &&
    state.count + requests > budget.perDay
  )
    return null
  state.count += requests
  // A hold-off (a 429's Retry-After) applies even to an unpaced endpoint.
  const start = Math.max(now, state.nextSlot)
  if (budget && budget.perSecond > 0 && Number.isFinite(budget.perSecond)) {
    state.nextSlot = start + (1000 * requests) / budget.perSecond
  }
  return start - now
}

/**
 * Pushes the key's next slot to at least `now + ms` (an endpoint that
 * answered 429 asked every caller to wait, not only the one that got it).
 */
export function holdOff(key: string, ms: number, now = Date.now()) {
  const state = stateOf(key, now)
  state.nextSlot = Math.max(state.nextSlot, now + ms)
}

/** Forget every count and slot (tests). */
export function resetPacers() {
  states.clear()
}
