// The conventions every Tollgate command shares (see README.md): usage errors, --version, ports, temporary folders.

export { BROKEN_PIPE_EXIT, exitQuietlyOnBrokenPipe, isBrokenPipe } from './broken-pipe.js'
export { type FlagSpec, type FlagTable, type FlagValues, flagHelp, type ReadFlags, readFlags } from './flags.js'
export { listenProblem, parsePort } from './port.js'
export { type OwnedTempDir, ownedTempDir } from './temp-dir.js'
export { parseArgsProblem, USAGE_EXIT, usageError, versionLine } from './usage.js'
