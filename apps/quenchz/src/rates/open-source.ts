// Opens the configured source: recordings directory, eurofxref-hist file, or the live ECB API.
import { HistorySource } from './sources/history.js'
import { LiveSource } from './sources/live.js'
import { RecordingsSource } from './sources/recordings.js'
import type { RatesSource, SourceConfig, UpstreamObserver } from './sources/source.js'

/**
 * Opens a source. Throws NoIndex / HistoryFormat (or a file-system error) when the data cannot be read. `upstream` is
 * told of the live source's vendor requests and cache hits (the other sources never ask a vendor).
 */
export async function openSource(config: SourceConfig, upstream?: UpstreamObserver): Promise<RatesSource> {
  switch (config.kind) {
    case 'recordings':
      return RecordingsSource.open(config.dir)
    case 'history':
      return HistorySource.open(config.file)
    case 'live':
      return LiveSource.open(config, upstream)
  }
}
