// Errors of the rates core. Machine faults (a corrupted recording, a missing index) are thrown as these;
// caller faults are never thrown, they become `{ ok: false, text }` tool outcomes.

/** Stable codes of every rates-core error. */
export type RatesErrorCode =
  | 'ERR_QUENCHZ_RECORDING_CORRUPTED'
  | 'ERR_QUENCHZ_RECORDING_ABSENT'
  | 'ERR_QUENCHZ_NO_INDEX'
  | 'ERR_QUENCHZ_HISTORY_FORMAT'
  | 'ERR_QUENCHZ_UNREACHABLE'
  | 'ERR_QUENCHZ_UPSTREAM'

/** Base class of every rates-core error; switch on `code`, never on the message. */
export class RatesError extends Error {
  readonly code: RatesErrorCode
  constructor(code: RatesErrorCode, message: string) {
    super(message)
    this.name = new.target.name
    this.code = code
  }
}

/** A recorded body whose length or SHA-256 differs from its index entry: a local fault, not the caller's. */
export class RecordingCorrupted extends RatesError {
  constructor(message: string) {
    super('ERR_QUENCHZ_RECORDING_CORRUPTED', message)
  }
}

/** A recording listed in index.json whose body file is not present: absent, which is not the same as modified. */
export class RecordingAbsent extends RatesError {
  readonly recording: string
  constructor(recording: string) {
    super('ERR_QUENCHZ_RECORDING_ABSENT', `${recording}.body is listed in the index but is not present`)
    this.recording = recording
  }
}

/** The recordings directory has no readable index.json. */
export class NoIndex extends RatesError {
  constructor(dir: string) {
    super('ERR_QUENCHZ_NO_INDEX', `no cassette index at ${dir}`)
  }
}

/** The eurofxref-hist file is not the CSV the ECB publishes. */
export class HistoryFormat extends RatesError {
  constructor(detail: string) {
    super('ERR_QUENCHZ_HISTORY_FORMAT', `the history file is not eurofxref-hist: ${detail}`)
  }
}

/**
 * An upstream outcome the tools neither answer nor refuse: a programming error (a new outcome kind added without its
 * refusal), thrown rather than answered silently. The message names the kind, which is the server's own word.
 */
export class Unreachable extends RatesError {
  readonly kind: string
  constructor(kind: unknown) {
    const shown = String(kind).slice(0, 40)
    super(
      'ERR_QUENCHZ_UNREACHABLE',
      `an upstream outcome of kind ${shown} has neither an answer nor a refusal; this is a bug in quenchz`,
    )
    this.kind = shown
  }
}

/** A live query the tools cannot turn into a refusal (the catalogue) failed upstream. */
export class UpstreamFailed extends RatesError {
  constructor(detail: string) {
    super('ERR_QUENCHZ_UPSTREAM', `the vendor could not answer: ${detail}`)
  }
}
