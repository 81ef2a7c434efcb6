// The sealed report, end to end: building and sealing it, reading one back (its shape), and its HTML page.
export {
  buildReport,
  REPORT_FORMAT,
  type Report,
  type ReportCheck,
  type ReportVerification,
  sealOf,
  verifyReport,
} from './report.js'
export { parseReportCommand, type ReportPageCommand, writeReportPage } from './report-command.js'
export { escapeHtml, renderReportHtml, type SealStatus } from './report-html.js'
export { asReport } from './report-shape.js'
