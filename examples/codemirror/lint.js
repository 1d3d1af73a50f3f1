// A CodeMirror 6 lint source over the gco-spec package: every error and
// warning of validateDocument, underlined at its range. The package counts
// columns in UTF-16 code units from 1, as CodeMirror's positions count
// characters, so a range maps onto the document line by line.
import { linter } from '@codemirror/lint';
import { validateDocument } from 'gco-spec';

/** A position of the package (line and column from 1) in a CodeMirror document. */
function offsetOf(doc, { line, column }) {
  const at = doc.line(Math.min(line, doc.lines));
  return Math.min(at.from + column - 1, at.to);
}

/**
 * The lint extension. `options` are validateDocument's: the server's
 * `GET /api/config` (deployedRegions, defaultImage, frameworks) and
 * `GET /api/monitor-settings` (monitorSettings), so that the editor answers
 * as `POST /api/validate` does.
 */
export function gcoSpecLinter(options = {}) {
  return linter((view) => {
    const { doc } = view.state;
    const answer = validateDocument(doc.toString(), options);
    const each = (list, severity) => list.map((d) => ({
      from: offsetOf(doc, d.range.start),
      to: offsetOf(doc, d.range.end),
      severity,
      source: 'gco-spec',
      message: d.path ? `${d.path}: ${d.message}` : d.message,
    }));
    return [...each(answer.errors, 'error'), ...each(answer.warnings, 'warning')];
  }, { delay: 250 });
}
