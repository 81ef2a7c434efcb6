// What a server started, stopped in the reverse order. A composition adds each resource right after it starts it, so a
// start that fails halfway stops exactly what had started, and a stop stops everything, newest first — one place
// instead of a hand-ordered chain and a cleanup in every `catch`.

/** A stack of things to stop, stopped newest first. */
export class Closers {
  readonly #stack: Array<{ readonly name: string; readonly close: () => unknown }> = []
  #closing: Promise<void> | undefined

  /** Adds `close` (sync or async) to be run at `closeAll`, before everything added earlier. `name` is for errors. */
  add(name: string, close: () => unknown): void {
    if (this.#closing !== undefined) throw new Error(`Closers: '${name}' added after closeAll`)
    this.#stack.push({ name, close })
  }

  /**
   * Runs every `close`, newest first, each after the one before it settled; one that throws does not keep the rest
   * from running. Resolves when all have run; rejects with the first error (an `AggregateError` when several threw).
   * Calling it again returns the same promise.
   */
  closeAll(): Promise<void> {
    this.#closing ??= this.#run()
    return this.#closing
  }

  async #run(): Promise<void> {
    const errors: unknown[] = []
    for (let i = this.#stack.length - 1; i >= 0; i--) {
      try {
        await (this.#stack[i] as { close: () => unknown }).close()
      } catch (error) {
        errors.push(error)
      }
    }
    if (errors.length === 1) throw errors[0]
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} resources failed to close`)
  }
}
