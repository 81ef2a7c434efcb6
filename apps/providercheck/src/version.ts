/** The kit's name and version, written into every report and printed by --version. */
export const KIT_NAME = 'providercheck'
// Pinned to the root package.json's version (the repository's one version source) by test/version.test.ts.
export const KIT_VERSION = '0.1.0'
