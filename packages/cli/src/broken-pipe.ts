// A command piped into a reader that stops early (`providercheck call … | head -1`): the next write fails with EPIPE,
// emitted as an 'error' event on process.stdout, which without a listener is an uncaught exception and a stack trace.
// Unix tools die of SIGPIPE there without a word; node ignores SIGPIPE, so this does the same by hand.

/** The exit status after a broken pipe: what a shell reports for a process killed by SIGPIPE (128 + 13). */
export const BROKEN_PIPE_EXIT = 141

/** Whether a write failed because the reading end of its pipe (or socket) was closed. */
export function isBrokenPipe(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EPIPE'
}

/**
 * Makes the process exit quietly with `exitCode` (default {@link BROKEN_PIPE_EXIT}) as soon as a write to one of
 * `streams` (default stdout and stderr) fails with EPIPE: nobody reads any more, so there is no one to tell. Any other
 * stream error is thrown on as before. Call it once, first thing in a command's entry point.
 */
export function exitQuietlyOnBrokenPipe(
  streams: readonly NodeJS.WritableStream[] = [process.stdout, process.stderr],
  exitCode: number = BROKEN_PIPE_EXIT,
): void {
  for (const stream of streams) {
    stream.on('error', (error: unknown) => {
      if (isBrokenPipe(error)) process.exit(exitCode)
      throw error
    })
  }
}
