// Fairness in time, not only in admission: the budget decides whether a call may run, this decides when.
// A caller may have at most `perCaller` calls in service and the server at most `total`; a freed slot goes to the
// caller that was served least recently among those waiting (round robin), never simply to the longest queue.
// A greedy caller with sixteen calls in flight therefore occupies `perCaller` slots, and a quiet caller's call
// starts at once instead of queueing behind the other fourteen.
// A caller's waiting calls are bounded too (`maxWaitingPerCaller`): each one holds a connection and a parsed body,
// so past the bound a call is refused at once with CallerQueueFull (the gate answers 429 with Retry-After) rather
// than queued for ever. The bound is per caller, so a greedy caller filling its own queue never refuses a quiet one.

import { CallerQueueFull } from './errors.js'

/** Runs a caller's work when the caller's share of the server allows it. */
export interface CallScheduler {
  /** Runs `work` for `caller` now or once a slot is free; resolves or rejects as `work` does. */
  run<T>(caller: string, work: () => Promise<T>): Promise<T>
}

/** Options of {@link FairScheduler}. */
export interface FairSchedulerOptions {
  /** Calls of one caller in service at once; default 2. */
  perCaller?: number
  /** Calls of all callers in service at once; default 8. */
  total?: number
  /** Calls of one caller waiting for a slot; one more is refused with CallerQueueFull. Default 32. */
  maxWaitingPerCaller?: number
}

interface Waiting {
  start: () => void
}

interface CallerState {
  inService: number
  queue: Waiting[]
  /** When this caller last had a call started (a counter, not a clock); 0 for never. */
  lastStarted: number
}

/** Per-caller in-flight limit with round-robin order of service among waiting callers. */
export class FairScheduler implements CallScheduler {
  readonly perCaller: number
  readonly total: number
  readonly maxWaitingPerCaller: number
  #inService = 0
  readonly #callers = new Map<string, CallerState>()
  #starts = 0

  constructor(options: FairSchedulerOptions = {}) {
    this.perCaller = positiveInteger('perCaller', options.perCaller, 2)
    this.total = positiveInteger('total', options.total, 8)
    this.maxWaitingPerCaller = positiveInteger('maxWaitingPerCaller', options.maxWaitingPerCaller, 32)
  }

  /** Calls in service now, all callers together (for tests and metrics). */
  get inService(): number {
    return this.#inService
  }

  /** Calls waiting for a slot, all callers together. */
  get waiting(): number {
    let n = 0
    for (const state of this.#callers.values()) n += state.queue.length
    return n
  }

  /** Rejects with {@link CallerQueueFull}, without running `work`, when the caller's queue is already full. */
  run<T>(caller: string, work: () => Promise<T>): Promise<T> {
    const state = this.#state(caller)
    const mustWait = state.queue.length > 0 || state.inService >= this.perCaller || this.#inService >= this.total
    if (mustWait && state.queue.length >= this.maxWaitingPerCaller) {
      return Promise.reject(new CallerQueueFull(this.maxWaitingPerCaller))
    }
    return new Promise<T>((resolve, reject) => {
      // The slot is freed before the caller hears back. The next waiting call starts on a later turn of the event
      // loop (setImmediate), never straight from this one: started back to back from promise continuations, a queue
      // of one caller's calls could run without the loop ever reading another caller's request off its socket.
      const finish = () => {
        this.#inService--
        state.inService--
        if (state.inService === 0 && state.queue.length === 0) this.#callers.delete(caller)
        this.#scheduleNext()
      }
      const start = () => {
        this.#inService++
        state.inService++
        state.lastStarted = ++this.#starts
        let running: Promise<T>
        try {
          running = work()
        } catch (error) {
          running = Promise.reject(error)
        }
        running.then(
          (value) => {
            finish()
            resolve(value)
          },
          (error: unknown) => {
            finish()
            reject(error)
          },
        )
      }
      if (mustWait) state.queue.push({ start })
      else start()
    })
  }

  #state(caller: string): CallerState {
    let state = this.#callers.get(caller)
    if (state === undefined) {
      state = { inService: 0, queue: [], lastStarted: 0 }
      this.#callers.set(caller, state)
    }
    return state
  }

  #nextPending = false
  #scheduleNext(): void {
    if (this.#nextPending) return
    this.#nextPending = true
    setImmediate(() => {
      this.#nextPending = false
      this.#next()
    })
  }

  // Starts waiting calls while slots are free: each time, the waiting caller under its own limit that was served
  // least recently. Callers are few (one per token subject), so a scan is cheaper than keeping a heap in order.
  #next(): void {
    while (this.#inService < this.total) {
      let chosen: CallerState | undefined
      for (const state of this.#callers.values()) {
        if (state.queue.length === 0 || state.inService >= this.perCaller) continue
        if (chosen === undefined || state.lastStarted < chosen.lastStarted) chosen = state
      }
      if (chosen === undefined) return
      ;(chosen.queue.shift() as Waiting).start()
    }
  }
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`)
  return value
}
