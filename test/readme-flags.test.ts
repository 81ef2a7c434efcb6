// The READMEs tell the truth about the command lines (issue 29 §7): every flag a README names for one of the CLIs —
// on a command line (a line of a code block, or a code span, that runs preflight, fakemerchant, providercheck, quenchz
// or prove, directly, with npx, or as `npm run <script> -- …`) or in a table row of that CLI's own README (a code
// span that starts with the flag) — is one the CLI knows; and every environment variable a README names (an
// assignment or `$NAME` on a command line, an UPPER_CASE name in a code span) is one the repository's code reads.
// How the CLI is asked, each from its own declarations, never from a list kept here:
//   preflight     its argument reader (runCli): anything but --help is `argument_unknown_option`;
//   fakemerchant  its --help (the usage lists every flag its parser declares);
//   providercheck its parser (parseCommandLine, with `call` or `report` in front for those subcommands);
//   quenchz       the flag tables that drive its parser and --help (SERVE_FLAGS, TOKENS_FLAGS for `quenchz tokens`);
//   prove         its two help texts (PROVE_HELP; RUNNER_HELP for `npm run prove -w apps/prove -- …`).
// An environment variable is known when some source reads it (`env.NAME`, `env['NAME']`, a 'NAME' literal handed to
// such a read, `$NAME` in a shell script) in the apps, packages, examples, scripts or .ci, or when it is one that
// Node.js, npm or the shell reads itself (SYSTEM_ENV); one set on a CLI's own command line (`NAME=… providercheck …`)
// must be read by that CLI: its app or the libraries under packages/.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { runCli } from '../apps/preflight/src/run-cli.ts'
import { PROVE_HELP, RUNNER_HELP } from '../apps/prove/src/command-line.ts'
import { parseCommandLine } from '../apps/providercheck/src/command-line.ts'
import { SERVE_FLAGS, TOKENS_FLAGS } from '../apps/quenchz/src/server/cli-options.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** A command a README line runs: which CLI (and subcommand) the flags after it belong to. */
type Cli =
  | 'preflight'
  | 'fakemerchant'
  | 'providercheck'
  | 'providercheck call'
  | 'providercheck report'
  | 'quenchz'
  | 'quenchz tokens'
  | 'prove'
  | 'prove runner'

/** Each README, and the CLI a bare flag in one of its table rows belongs to (none: only command lines count). */
const READMES: Record<string, Cli | undefined> = {
  'README.md': undefined,
  'apps/preflight/README.md': 'preflight',
  'apps/provider/README.md': 'fakemerchant',
  'apps/providercheck/README.md': 'providercheck',
  'apps/quenchz/README.md': 'quenchz',
  'apps/prove/README.md': 'prove',
  'apps/interop/README.md': undefined,
  'examples/merchant-billing/README.md': undefined,
}

/** Variables read by Node.js, npm, the shell or the OS, not by this repository's code. */
const SYSTEM_ENV = new Set([
  'PATH',
  'HOME',
  'TMPDIR',
  'CI',
  'NODE_OPTIONS',
  'NODE_ENV',
  'NODE_EXTRA_CA_CERTS',
  'XDG_CACHE_HOME',
  'SSL_CERT_FILE',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'DEBIAN_FRONTEND',
])

// ---- what each CLI knows -------------------------------------------------------------------------------------------

const flagsOfHelp = (help: string) =>
  new Set([...help.matchAll(/(?<![\w-])(--?[a-z][a-z0-9-]*)/g)].map((m) => (m[1] as string).replace(/^-+/, '')))

let fakemerchantHelp: Set<string> | undefined
function fakemerchantFlags(): Set<string> {
  if (fakemerchantHelp === undefined) {
    const r = spawnSync(
      process.execPath,
      ['--conditions=@tollgate/source', '--import', 'tsx', join(ROOT, 'apps/provider/src/fakemerchant.ts'), '--help'],
      { encoding: 'utf8', cwd: ROOT, timeout: 120_000 },
    )
    assert.equal(r.status, 0, `fakemerchant --help: ${r.stderr}`)
    fakemerchantHelp = flagsOfHelp(r.stdout)
    assert.ok(fakemerchantHelp.has('port') && fakemerchantHelp.has('db'), 'fakemerchant --help lists its flags')
  }
  return fakemerchantHelp
}

const declared = (table: Readonly<Record<string, { readonly short?: string; readonly help: string }>>) =>
  new Set(Object.entries(table).flatMap(([name, spec]) => (spec.short === undefined ? [name] : [name, spec.short])))

/** Does `cli` know `flag` (as written in the README, dashes included)? */
function knows(cli: Cli, flag: string): boolean {
  const name = flag.replace(/^-+/, '').split('=')[0] as string
  switch (cli) {
    case 'preflight':
      return runCli([flag]).diagnostic !== 'argument_unknown_option'
    case 'fakemerchant':
      return flag.startsWith('--') || name === 'h' ? fakemerchantFlags().has(name) : false
    case 'providercheck':
    case 'providercheck call':
    case 'providercheck report': {
      const sub = cli === 'providercheck' ? [] : [cli.split(' ')[1] as string]
      const parsed = parseCommandLine([...sub, `-${name}`])
      return !(parsed.kind === 'usage_error' && /unknown flag/.test(parsed.message))
    }
    case 'quenchz':
    case 'quenchz tokens': {
      const table = declared(cli === 'quenchz' ? SERVE_FLAGS : TOKENS_FLAGS)
      // parseArgs: a long flag takes two dashes, a short one one.
      return flag.startsWith('--') ? table.has(name) && name.length > 1 : table.has(name) && name.length === 1
    }
    case 'prove':
    case 'prove runner':
      return flagsOfHelp(cli === 'prove' ? PROVE_HELP : RUNNER_HELP).has(name)
  }
}

// ---- what the READMEs name -----------------------------------------------------------------------------------------

interface Named {
  readme: string
  line: number
  cli: Cli
  flag: string
  /** A bare flag in a table row: other CLIs that row names, any of which may be the one that knows it. */
  alsoOf?: Cli[]
}

/** A CLI and its subcommands: a bare flag in its README's table may be any of theirs. */
const FAMILY: Record<string, Cli[]> = {
  providercheck: ['providercheck', 'providercheck call', 'providercheck report'],
  quenchz: ['quenchz', 'quenchz tokens'],
  prove: ['prove', 'prove runner'],
}
const familyOf = (cli: Cli): Cli[] => FAMILY[cli] ?? [cli]
/** Is a named flag known: by its CLI or, for a bare flag in a table row, by that CLI's family or a CLI the row names. */
const isKnown = (f: Named) =>
  f.alsoOf === undefined
    ? knows(f.cli, f.flag)
    : [f.cli, ...f.alsoOf].flatMap(familyOf).some((cli) => knows(cli, f.flag))
interface NamedEnv {
  readme: string
  line: number
  name: string
  /** Set on a command line for this CLI (`NAME=… providercheck …`): the CLI itself must read it. */
  cli?: Cli
}

/** Where each CLI's code lives: its app (the libraries it bundles are under packages/). */
const APP_OF: Record<string, string> = {
  preflight: 'apps/preflight/',
  fakemerchant: 'apps/provider/',
  providercheck: 'apps/providercheck/',
  quenchz: 'apps/quenchz/',
  prove: 'apps/prove/',
}

const BINS = new Set(['preflight', 'fakemerchant', 'providercheck', 'quenchz', 'prove'])
const ENV_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/

/** Shell-ish words of a command text (quotes removed, nothing expanded). */
function words(text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/'[^']*'|"[^"]*"|[^\s'"]+(?:'[^']*'|"[^"]*"|[^\s'"]*)*/g)) out.push(m[0])
  return out
}

/** The CLI a command segment runs, and the index of its first argument; undefined for any other command. */
function cliOf(segment: readonly string[]): { cli: Cli; from: number } | undefined {
  let i = 0
  while (i < segment.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(segment[i] as string)) i++
  while (['sudo', 'env', 'exec', 'time', 'npx'].includes(segment[i] as string)) i++
  const word = (segment[i] ?? '').replace(/^.*\//, '')
  if (word === 'npm' && segment[i + 1] === 'run') {
    const script = segment[i + 2]
    const dashes = segment.indexOf('--', i + 3)
    if (dashes < 0) return undefined
    const workspace = segment.slice(i + 3, dashes).join(' ')
    if (script === 'fakemerchant') return { cli: 'fakemerchant', from: dashes + 1 }
    if (script === 'quenchz') return { cli: 'quenchz', from: dashes + 1 }
    if (script === 'prove' && workspace.includes('apps/prove')) return { cli: 'prove runner', from: dashes + 1 }
    return undefined
  }
  if (!BINS.has(word)) return undefined
  const sub = segment[i + 1]
  if (word === 'providercheck' && (sub === 'call' || sub === 'report'))
    return { cli: `providercheck ${sub}`, from: i + 2 }
  if (word === 'quenchz' && sub === 'tokens') return { cli: 'quenchz tokens', from: i + 2 }
  return { cli: word as Cli, from: i + 1 }
}

/** Flags and variables of one command text (a code block's line, or a code span). */
function scanCommand(text: string, at: { readme: string; line: number }, flags: Named[], envs: NamedEnv[]) {
  for (const m of text.matchAll(/\$\{?([A-Z][A-Z0-9_]*)\}?/g))
    if (ENV_NAME.test(m[1] as string)) envs.push({ ...at, name: m[1] as string })
  const all = words(text.replace(/#\s.*$/, ''))
  let segment: string[] = []
  const segments: string[][] = []
  for (const w of all) {
    if (['|', '||', '&&', ';', '&', '(', ')'].includes(w)) {
      segments.push(segment)
      segment = []
    } else if (w.endsWith(';')) {
      segment.push(w.slice(0, -1))
      segments.push(segment)
      segment = []
    } else segment.push(w)
  }
  segments.push(segment)
  for (const seg of segments) {
    const run = cliOf(seg)
    for (const w of seg) {
      const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(w)
      if (assignment === null) break
      if (ENV_NAME.test(assignment[1] as string))
        envs.push({ ...at, name: assignment[1] as string, ...(run !== undefined && { cli: run.cli }) })
    }
    if (run === undefined) continue
    for (const w of seg.slice(run.from)) {
      // A flag: one or two dashes, then a lower-case name (`-` alone, `--` and negative numbers are not flags).
      if (/^--?[a-z][a-z0-9-]*(=.*)?$/.test(w)) flags.push({ ...at, cli: run.cli, flag: w.split('=')[0] as string })
    }
  }
}

function scanReadme(readme: string): { flags: Named[]; envs: NamedEnv[] } {
  const text = readFileSync(join(ROOT, readme), 'utf8')
  const flags: Named[] = []
  const envs: NamedEnv[] = []
  const own = READMES[readme]
  let fence = false
  let pending = ''
  let header = ''
  const lines = text.split('\n')
  lines.forEach((raw, index) => {
    const at = { readme, line: index + 1 }
    if (/^\s*(```|~~~)/.test(raw)) {
      fence = !fence
      pending = ''
      return
    }
    if (fence) {
      // A line ending in a backslash goes on on the next one.
      const joined = pending + raw
      if (joined.endsWith('\\')) {
        pending = `${joined.slice(0, -1)} `
        return
      }
      pending = ''
      scanCommand(joined.replace(/^\s*[$>]\s+/, ''), at, flags, envs)
      return
    }
    const row = raw.trimStart().startsWith('|')
    // A table's first row is its header (what its cells are: "variable", "flag", …).
    if (row && !(lines[index - 1] ?? '').trimStart().startsWith('|')) header = raw
    if (!row) header = ''
    // An UPPER_CASE name in a code span is an environment variable where the line, or its table's header, says so
    // (other such names are constants, POSIX flags or a payload's fields).
    const aboutEnv = /\benv\b|environment|variable/i.test(`${raw} ${header}`)
    // Other CLIs a table row names: its bare flags may be theirs (e.g. the arguments prove hands to quenchz).
    const named = row ? [...BINS].filter((b) => new RegExp(`\\b${b}\\b`).test(raw)) : []
    for (const m of raw.matchAll(/`([^`]+)`/g)) {
      const span = (m[1] as string).trim()
      if (ENV_NAME.test(span) && !span.startsWith('ERR_') && aboutEnv) envs.push({ ...at, name: span })
      // A table row of a CLI's own README: a span that starts with a flag names that CLI's flag (or, when the row
      // names other CLIs, one of theirs).
      const bare = /^(--?[a-z][a-z0-9-]*)(?=$|[\s=[])/.exec(span)
      if (bare !== null) {
        if (row && own !== undefined)
          flags.push({ ...at, cli: own, flag: bare[1] as string, alsoOf: named.filter((b) => b !== own) as Cli[] })
        continue
      }
      scanCommand(span, at, flags, envs)
    }
  })
  return { flags, envs }
}

// ---- who reads an environment variable ----------------------------------------------------------------------------

const SOURCE_DIRS = ['apps', 'packages', 'examples', 'scripts', '.ci']
const SKIP = new Set(['node_modules', 'dist', 'bundle', '.build', 'coverage', 'validation'])

function sourceFiles(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue
    const path = join(dir, name)
    const st = statSync(path)
    if (st.isDirectory()) sourceFiles(path, out)
    else if (/\.(ts|mts|mjs|js|sh)$/.test(name) || name === 'run' || /\.(service|cfg)$/.test(name)) out.push(path)
  }
  return out
}

let sources: { path: string; text: string }[] | undefined
/** The files that read `name` from the environment. */
function readersOf(name: string): string[] {
  sources ??= SOURCE_DIRS.flatMap((d) => sourceFiles(join(ROOT, d))).map((path) => ({
    path,
    text: readFileSync(path, 'utf8'),
  }))
  const reads = [
    `env.${name}`,
    `env['${name}']`,
    `env["${name}"]`,
    `'${name}'`,
    `"${name}"`,
    `$${name}`,
    `\${${name}`,
    // systemd: Environment=NAME=… / EnvironmentFile lines name what the unit hands the process.
    `${name}=`,
  ]
  return sources.filter((s) => reads.some((r) => s.text.includes(r))).map((s) => relative(ROOT, s.path))
}

// ---- the tests -----------------------------------------------------------------------------------------------------

const scanned = Object.keys(READMES)
  .filter((r) => existsSync(join(ROOT, r)))
  .map((readme) => ({ readme, ...scanReadme(readme) }))

describe('the READMEs name only flags the CLIs know', () => {
  for (const { readme, flags } of scanned) {
    test(readme, () => {
      const unknown = flags.filter((f) => !isKnown(f)).map((f) => `${readme}:${f.line} ${f.cli} ${f.flag}`)
      assert.deepEqual(unknown, [], `flags no CLI knows:\n${unknown.join('\n')}`)
    })
  }

  test('the scan finds what the READMEs are known to hold (it reads tables, code blocks and code spans)', () => {
    const seen = (readme: string, cli: Cli, flag: string) =>
      scanned.some((s) => s.readme === readme && s.flags.some((f) => f.cli === cli && f.flag === flag))
    assert.ok(seen('apps/quenchz/README.md', 'quenchz', '--budget-redis'))
    assert.ok(seen('apps/providercheck/README.md', 'providercheck', '-base-url'))
    assert.ok(seen('apps/provider/README.md', 'fakemerchant', '--port'))
    assert.ok(seen('README.md', 'providercheck', '-sandbox'))
    assert.ok(seen('apps/prove/README.md', 'prove runner', '--port'))
    assert.ok(scanned.reduce((n, s) => n + s.flags.length, 0) > 100)
  })

  test('the check itself tells a known flag from an unknown one, for every CLI', () => {
    const cases: [Cli, string, boolean][] = [
      ['preflight', '--help', true],
      ['preflight', '--nope', false],
      ['fakemerchant', '--database-url', true],
      ['fakemerchant', '--nope', false],
      ['providercheck', '-sandbox', true],
      ['providercheck', '--base-url', true],
      ['providercheck', '-nope', false],
      ['providercheck call', '-transport', true],
      ['providercheck call', '-tenant', false],
      ['providercheck report', '-o', true],
      ['quenchz', '--budget-redis', true],
      ['quenchz', '-h', true],
      ['quenchz', '--nope', false],
      ['quenchz tokens', '--tokens-file', true],
      ['quenchz tokens', '--budget-redis', false],
      ['prove', '--version', true],
      ['prove', '--port', false],
      ['prove runner', '--port', true],
    ]
    for (const [cli, flag, known] of cases) assert.equal(knows(cli, flag), known, `${cli} ${flag}`)
  })
})

describe('the READMEs name only environment variables the code reads', () => {
  for (const { readme, envs } of scanned) {
    test(readme, () => {
      const unknown = [...new Map(envs.map((e) => [e.name, e])).values()]
        .filter((e) => !SYSTEM_ENV.has(e.name) && readersOf(e.name).length === 0)
        .map((e) => `${readme}:${e.line} ${e.name}`)
      assert.deepEqual(unknown, [], `variables nothing reads:\n${unknown.join('\n')}`)
    })
  }

  test('a variable set on the command line of a CLI is read by that CLI (its app or the libraries it bundles)', () => {
    const wrong = scanned
      .flatMap((s) => s.envs)
      .filter((e) => e.cli !== undefined && !SYSTEM_ENV.has(e.name))
      .filter((e) => {
        const app = APP_OF[(e.cli as Cli).split(' ')[0] as string] as string
        return !readersOf(e.name).some((f) => f.startsWith(app) || f.startsWith('packages/'))
      })
      .map((e) => `${e.readme}:${e.line} ${e.name} for ${e.cli}`)
    assert.deepEqual(wrong, [], `set for a CLI that does not read it:\n${wrong.join('\n')}`)
  })

  test('the scan finds the variables the READMEs are known to name', () => {
    const names = new Set(scanned.flatMap((s) => s.envs.map((e) => e.name)))
    for (const n of ['SIGNING_SECRET', 'PROVIDERCHECK_SANDBOX_SIGNING_SECRET', 'QUENCHZ_PORT'])
      assert.ok(names.has(n), n)
    assert.equal(readersOf('TOLLGATE_NO_SUCH_VARIABLE').length, 0)
  })
})
