// The report people look at: one self-contained HTML page (inline CSS, no scripts, no external assets) rendered
// from a sealed report. Every value in a report may come from the provider's bytes, so every one is escaped, and
// the page's Content-Security-Policy forbids scripts and fetches even if an escape were ever missed.
import { LIVE_SECRET_ENV, SECRET_ENV } from './credential-env.js'
import type { Report, ReportCheck } from './report.js'
import { type CheckId, REQUIREMENTS } from './requirements.js'

/** What is known about the report's seal when the page is written. */
export type SealStatus =
  | { state: 'sealed'; kept: boolean } // sealed by this run just now; kept: the JSON report was written too
  | { state: 'verified' }
  | { state: 'not_verified'; reason: string }
  | { state: 'not_checked' } // no secret at hand

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

/** Escapes text for HTML element content and double- or single-quoted attribute values. */
export function escapeHtml(text: unknown): string {
  return String(text)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
}

const esc = escapeHtml

/** The whole page for a report. */
export function renderReportHtml(report: Report, seal: SealStatus): string {
  const outcome = report.outcome
  const total = report.checks.length + report.not_run.length
  const title = `providercheck ${outcome.toUpperCase()}: ${report.target.base_url}`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<header class="head">
  <div class="badge outcome-${esc(outcome)}" data-testid="outcome">${esc(outcome.toUpperCase())}</div>
  <div class="head-text">
    <h1>providercheck report</h1>
    <p class="target" data-testid="target">${esc(report.target.base_url)}</p>
    <p class="sub">${esc(outcomeSentence(report, total))}</p>
  </div>
</header>
${factsHtml(report, seal)}
${countsHtml(report, total)}
<section>
<h2>Checks</h2>
${checksTableHtml(report)}
</section>
<section>
<h2>Timeline</h2>
${timelineHtml(report)}
</section>
${failuresHtml(report)}
<footer>
  Written by ${esc(report.kit.name)} ${esc(report.kit.version)} from report format ${esc(report.format)}. The seal
  covers the JSON report; check it with <code>providercheck verify REPORT.json</code> (the secret comes from
  <code>${secretEnvOf(report)}</code>). Excerpts are shortened and never show a secret, token or
  edge header value.
</footer>
</main>
</body>
</html>
`
}

function outcomeSentence(report: Report, total: number): string {
  if (report.outcome === 'pass') return `Every check passed or did not apply (${total} checks).`
  if (report.outcome === 'interrupted')
    return `Interrupted: ${report.checks.length} of ${total} checks ended before the run was stopped; this report is partial.`
  return `${report.summary.fail} failed and ${report.summary.skip} skipped of ${total} checks.`
}

/** Where the secret that seals this report comes from: a live run's production secret, or the sandbox one. */
export function secretEnvOf(report: Pick<Report, 'target'>): string {
  return report.target.environment === 'production' ? LIVE_SECRET_ENV : SECRET_ENV
}

function factsHtml(report: Report, seal: SealStatus): string {
  const credentials = [
    report.credentials.bearer_token ? 'bearer token' : 'no bearer token',
    report.credentials.edge_headers.length > 0
      ? `edge headers ${report.credentials.edge_headers.join(', ')}`
      : 'no edge headers',
  ].join('; ')
  const given = (ref: string | null) => ref ?? 'none given'
  const fixtures = `customer ${given(report.fixtures.customer)}, transaction ${given(report.fixtures.transaction)}, subscription ${given(report.fixtures.subscription)}`
  const facts: [string, string, string?][] = [
    ['Provider', report.target.base_url],
    ['Transport', `${report.target.transport} (${report.target.environment})`],
    // REST has no eras: the era is an MCP fact, absent by design over REST.
    [
      'Era',
      report.target.era ??
        (report.target.transport === 'rest' ? 'none (eras are MCP only)' : 'unknown (discovery did not finish)'),
    ],
    ['Tenant', report.target.tenant],
    ['Date', `${humanTime(report.started_at)} – ${humanTime(report.finished_at)} (${elapsedMs(report)} ms)`],
    ['Fixtures', fixtures],
    ['Credentials', credentials],
    ['Kit', `${report.kit.name} ${report.kit.version}`],
  ]
  const rows = facts.map(([name, value]) => `<dt>${esc(name)}</dt><dd>${esc(value)}</dd>`).join('\n')
  return `<dl class="facts">
${rows}
<dt>Seal</dt><dd data-testid="seal">${sealHtml(seal, report)}</dd>
</dl>`
}

function sealHtml(seal: SealStatus, report: Report): string {
  const secretEnv = secretEnvOf(report)
  switch (seal.state) {
    case 'sealed':
      return seal.kept
        ? `<span class="seal seal-ok">sealed</span> HMAC-SHA256 with the ${report.target.environment === 'production' ? 'production' : 'sandbox'} signing secret, by this run; the JSON report carries the seal`
        : '<span class="seal seal-unknown">sealed, not kept</span> this run wrote no JSON report (-json FILE keeps one to verify)'
    case 'verified':
      return `<span class="seal seal-ok">verified</span> with the secret in ${secretEnv}`
    case 'not_verified':
      return `<span class="seal seal-bad">does NOT verify (${esc(seal.reason)})</span> the report was altered or sealed with another secret: do not trust it`
    case 'not_checked':
      return `<span class="seal seal-unknown">not checked</span> ${secretEnv} was not set`
  }
}

function countsHtml(report: Report, total: number): string {
  const notRun = report.not_run.length
  return `<section class="counts" data-testid="counts">
  <div class="count count-pass"><b>${report.summary.pass}</b> pass</div>
  <div class="count count-fail"><b>${report.summary.fail}</b> fail</div>
  <div class="count count-skip"><b>${report.summary.skip}</b> skip</div>
  ${notRun > 0 ? `<div class="count count-notrun"><b>${notRun}</b> not run</div>` : ''}
  <div class="count count-total">of <b>${total}</b> checks</div>
</section>`
}

function checksTableHtml(report: Report): string {
  const rows = report.checks.map((check, index) => {
    const requirement = requirementOf(check.id)
    const name = check.verdict === 'fail' ? `<a href="#check-${esc(check.id)}">${esc(check.id)}</a>` : esc(check.id)
    return `<tr class="row-${verdictClass(check)}" data-check="${esc(check.id)}">
  <td class="num">${index + 1}</td>
  <td class="id">${name}</td>
  <td><span class="pill pill-${verdictClass(check)}">${esc(check.verdict)}</span></td>
  <td class="code">${esc(check.code ?? '–')}</td>
  <td class="reason">${esc(check.reason)}</td>
  <td class="section">${esc(requirement?.section ?? '–')}</td>
  <td class="ms">${esc(check.duration_ms)} ms</td>
</tr>`
  })
  const notRun = report.not_run.map(
    (id, index) => `<tr class="row-notrun" data-check="${esc(id)}">
  <td class="num">${report.checks.length + index + 1}</td>
  <td class="id">${esc(id)}</td>
  <td><span class="pill pill-notrun">not run</span></td>
  <td class="code">–</td>
  <td class="reason">the run was interrupted before this check</td>
  <td class="section">${esc(requirementOf(id)?.section ?? '–')}</td>
  <td class="ms">–</td>
</tr>`,
  )
  return `<table class="checks" data-testid="checks">
<thead><tr><th>#</th><th>Check</th><th>Verdict</th><th>Code</th><th>Reason</th><th>Seed section</th><th>Time</th></tr></thead>
<tbody>
${[...rows, ...notRun].join('\n')}
</tbody>
</table>`
}

// Checks run one after another, so each starts where the previous ended; the scale is the whole run.
function timelineHtml(report: Report): string {
  const sum = report.checks.reduce((total, c) => total + nonNegative(c.duration_ms), 0)
  const scale = Math.max(1, elapsedMs(report), sum)
  let offset = 0
  const rows = report.checks.map((check) => {
    const ms = nonNegative(check.duration_ms)
    const left = (offset / scale) * 100
    const width = (ms / scale) * 100
    offset += ms
    return `<div class="tl-row"><span class="tl-id">${esc(check.id)}</span><span class="tl-track"><span class="tl-bar bar-${verdictClass(check)}" style="margin-left:${left.toFixed(2)}%;width:${width.toFixed(2)}%"></span><span class="tl-ms">${esc(ms)} ms</span></span></div>`
  })
  return `<div class="timeline" data-testid="timeline">
${rows.join('\n')}
<div class="tl-axis"><span>0 ms</span><span>${esc(scale)} ms</span></div>
</div>`
}

function failuresHtml(report: Report): string {
  const failing = report.checks.filter((c) => c.verdict === 'fail')
  if (failing.length === 0) return ''
  const articles = failing.map((check) => {
    const requirement = requirementOf(check.id)
    const exchanges = (check.exchanges ?? []).map(
      (e, i) => `<div class="exchange">
  <div class="ex-label">call ${i + 1}: sent</div><pre class="sent">${esc(e.sent)}</pre>
  <div class="ex-label">came back</div><pre class="received">${esc(e.received)}</pre>
</div>`,
    )
    return `<article class="failure" id="check-${esc(check.id)}" data-testid="failure">
<h3><span class="pill pill-fail">fail</span> ${esc(check.id)} <span class="code">${esc(check.code ?? '')}</span></h3>
<p class="reason">${esc(check.reason)}</p>
<dl class="facts small">
<dt>Seed section</dt><dd>${esc(requirement?.section ?? '–')}</dd>
<dt>Proves</dt><dd>${esc(requirement?.behaviour ?? '–')}</dd>
<dt>Time</dt><dd>${esc(check.duration_ms)} ms</dd>
</dl>
${exchanges.length > 0 ? exchanges.join('\n') : '<p class="muted">No call was recorded for this check.</p>'}
</article>`
  })
  return `<section>
<h2>Failing checks</h2>
${articles.join('\n')}
</section>`
}

function verdictClass(check: ReportCheck): string {
  if (check.verdict === 'pass') return 'pass'
  if (check.verdict === 'fail') return 'fail'
  if (check.code === 'not_applicable') return 'na'
  return 'skip'
}

function requirementOf(id: string): { section: string; behaviour: string } | undefined {
  return Object.hasOwn(REQUIREMENTS, id) ? REQUIREMENTS[id as CheckId] : undefined
}

function nonNegative(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0
}

function elapsedMs(report: Report): number {
  const ms = Date.parse(report.finished_at) - Date.parse(report.started_at)
  return Number.isFinite(ms) && ms >= 0 ? ms : 0
}

function humanTime(iso: string): string {
  const ms = Date.parse(iso)
  return Number.isFinite(ms) ? `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC` : iso
}

const STYLE = `
:root { --pass: #1a7f37; --pass-bg: #dafbe1; --fail: #cf222e; --fail-bg: #ffebe9; --skip: #9a6700;
  --skip-bg: #fff8c5; --na: #57606a; --na-bg: #eaeef2; --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f8fa; color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 24px 40px; }
h1 { margin: 0; font-size: 22px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
h3 { font-size: 15px; margin: 0 0 6px; }
code, pre, .code, .target { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; }
.head { display: flex; gap: 18px; align-items: center; background: #fff; border: 1px solid var(--line);
  border-radius: 10px; padding: 18px 20px; }
.badge { font-weight: 700; font-size: 22px; letter-spacing: .04em; padding: 14px 20px; border-radius: 8px;
  color: #fff; min-width: 110px; text-align: center; }
.outcome-pass { background: var(--pass); } .outcome-fail { background: var(--fail); }
.outcome-interrupted { background: var(--skip); }
.target { margin: 2px 0; font-size: 15px; overflow-wrap: anywhere; }
.sub { margin: 0; color: var(--muted); }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; margin: 14px 0 0;
  background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 14px 20px; }
.facts.small { background: transparent; border: 0; padding: 0; margin: 8px 0; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
.seal { font-weight: 600; padding: 1px 8px; border-radius: 10px; margin-right: 6px; }
.seal-ok { background: var(--pass-bg); color: var(--pass); } .seal-bad { background: var(--fail-bg); color: var(--fail); }
.seal-unknown { background: var(--na-bg); color: var(--na); }
.counts { display: flex; gap: 10px; margin: 14px 0 0; flex-wrap: wrap; }
.count { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 10px 16px; min-width: 96px; }
.count b { font-size: 22px; margin-right: 4px; }
.count-pass b { color: var(--pass); } .count-fail b { color: var(--fail); } .count-skip b { color: var(--skip); }
.count-notrun b { color: var(--na); } .count-total { color: var(--muted); }
table.checks { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line);
  border-radius: 10px; overflow: hidden; }
.checks th, .checks td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
.checks th { background: #f0f3f6; font-weight: 600; font-size: 13px; }
.checks tr:last-child td { border-bottom: 0; }
.checks td.num, .checks td.ms { color: var(--muted); white-space: nowrap; }
.checks td.id { font-weight: 600; white-space: nowrap; }
.checks td.code { white-space: nowrap; font-size: 13px; }
.checks td.section { color: var(--muted); font-size: 12.5px; max-width: 260px; }
.checks td.reason { overflow-wrap: anywhere; }
tr.row-fail { background: #fff5f5; } tr.row-fail td:first-child { box-shadow: inset 4px 0 var(--fail); }
tr.row-skip td:first-child { box-shadow: inset 4px 0 var(--skip); }
tr.row-notrun { color: var(--muted); }
.pill { display: inline-block; font-weight: 700; font-size: 12px; padding: 1px 9px; border-radius: 10px; white-space: nowrap; }
.pill-pass { background: var(--pass-bg); color: var(--pass); } .pill-fail { background: var(--fail-bg); color: var(--fail); }
.pill-skip { background: var(--skip-bg); color: var(--skip); } .pill-na, .pill-notrun { background: var(--na-bg); color: var(--na); }
a { color: #0969da; }
.timeline { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 12px 16px; }
.tl-row { display: flex; align-items: center; gap: 10px; height: 20px; }
.tl-id { width: 190px; flex: none; font-size: 12.5px; color: var(--muted); }
.tl-track { flex: 1; display: flex; align-items: center; gap: 6px; border-left: 1px solid var(--line); height: 100%;
  padding-right: 64px; }
.tl-bar { display: inline-block; height: 11px; min-width: 2px; border-radius: 3px; flex: none; }
.tl-ms { font-size: 11.5px; color: var(--muted); white-space: nowrap; }
.bar-pass { background: var(--pass); } .bar-fail { background: var(--fail); } .bar-skip { background: var(--skip); }
.bar-na { background: var(--na); }
.tl-axis { display: flex; justify-content: space-between; margin: 0 64px 0 200px; font-size: 11.5px; color: var(--muted); }
.failure { background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--fail); border-radius: 10px;
  padding: 14px 18px; margin: 0 0 14px; }
.failure .reason { margin: 0 0 4px; font-size: 14.5px; }
.failure h3 .code { color: var(--fail); font-size: 13px; font-weight: 600; }
.exchange { margin: 10px 0 0; }
.ex-label { font-size: 12px; color: var(--muted); margin: 6px 0 2px; text-transform: uppercase; letter-spacing: .04em; }
pre { margin: 0; padding: 8px 10px; background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px;
  white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12.5px; }
pre.received { background: #fff8f8; }
.muted { color: var(--muted); }
footer { margin-top: 28px; color: var(--muted); font-size: 12.5px; }
@media print { body { background: #fff; } .head, .facts, .count, table.checks, .timeline, .failure { border-color: #999; } }
`
