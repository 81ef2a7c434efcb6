// A reload asked for by a signal (SIGHUP): one at a time, and asks that arrive during one are answered by one more
// reload after it (it reads the newest files anyway), never by a second reload running beside the first.

/**
 * Returns a function that asks for a reload. `reload` runs at once when none is running; asked during one, it runs
 * once more after it, however many times it was asked. A `reload` that rejects is handed to `onFailure` (the server
 * goes on as it was) and never becomes an unhandled rejection.
 */
export function serialReloader(reload: () => Promise<void>, onFailure: (error: unknown) => void): () => void {
  let running = false
  let again = false
  const run = async (): Promise<void> => {
    running = true
    do {
      again = false
      try {
        await reload()
      } catch (error) {
        onFailure(error)
      }
    } while (again)
    running = false
  }
  return () => {
    if (running) again = true
    else void run()
  }
}
