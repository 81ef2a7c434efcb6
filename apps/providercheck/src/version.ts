/** The kit's name and version, written into every report. */
export const KIT_NAME = 'providercheck'
export const KIT_VERSION = '0.1.0'
