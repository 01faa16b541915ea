// Reads LanceDB's own answers for one table version: row count, schema, the
// four special columns of a plain scan and, optionally, the data rows.
import { canonicalSchema } from "./schema.mjs";
import { encodeRuns } from "./runs.mjs";
import { tableRows } from "./values.mjs";

/** The special columns LanceDB 0.39 exposes on a scan, in answers order. */
export const SPECIAL = ["_rowid", "_rowaddr", "_row_created_at_version", "_row_last_updated_at_version"];

/** Concatenates a u64 result column into one BigUint64Array; refuses nulls. */
function u64Column(table, name) {
  const v = table.getChild(name);
  if (!v) throw new Error(`answers: scan result has no ${name} column`);
  if (v.nullCount !== 0) throw new Error(`answers: ${name} has ${v.nullCount} nulls`);
  const out = new BigUint64Array(table.numRows);
  let at = 0;
  for (const d of v.data) {
    if (!(d.values instanceof BigUint64Array)) throw new Error(`answers: ${name} is ${d.type}, want uint64`);
    out.set(d.values.subarray(d.offset, d.offset + d.length), at);
    at += d.length;
  }
  return out;
}

/**
 * Checks out `version` on `tbl` and returns {entry, ids, lastUpdated}:
 * entry is the answers-file object of that version (without op/timestamp),
 * ids/lastUpdated feed the change computation.
 */
export async function readVersion(tbl, version, { withData }) {
  await tbl.checkout(version);
  const got = await tbl.version();
  if (got !== version) throw new Error(`answers: checkout(${version}) gave version ${got}`);
  const numRows = await tbl.countRows();
  const schema = await tbl.schema();
  const dataCols = schema.fields.map((f) => f.name);
  for (const c of dataCols) if (SPECIAL.includes(c)) throw new Error(`answers: user column ${c} clashes with a special column`);
  const cols = withData ? [...dataCols, ...SPECIAL] : SPECIAL;
  const res = await tbl.query().select(cols).toArrow();
  if (res.numRows !== numRows) throw new Error(`answers: version ${version}: scan returned ${res.numRows} rows, countRows ${numRows}`);
  const special = Object.fromEntries(SPECIAL.map((c) => [c, u64Column(res, c)]));
  const entry = {
    version,
    num_rows: numRows,
    schema: canonicalSchema(schema),
    rows: Object.fromEntries(SPECIAL.map((c) => [c, encodeRuns(special[c])])),
  };
  if (withData) entry.data = tableRows(res, dataCols);
  return { entry, special, ids: special._rowid, lastUpdated: special._row_last_updated_at_version };
}
