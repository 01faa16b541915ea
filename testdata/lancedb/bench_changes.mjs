// Times what computing a change set costs with LanceDB alone: scanning the
// stable row ids and last-updated versions of both versions (the diff itself
// is not even counted). mvd's benchmark prints it beside its own figure.
//
//   node bench_changes.mjs TABLE_DIR FROM TO [REPEATS]
//
// Prints one JSON line: {"scan_ms": best of REPEATS, "rows_scanned": n}.
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";

const [tableDir, fromArg, toArg, repeatsArg] = process.argv.slice(2);
if (!tableDir || !fromArg || !toArg) {
  console.error("usage: node bench_changes.mjs TABLE_DIR FROM TO [REPEATS]");
  process.exit(2);
}
const db = await lancedb.connect(path.dirname(path.resolve(tableDir)));
const tbl = await db.openTable(path.basename(tableDir).replace(/\.lance$/, ""));
const cols = ["_rowid", "_row_last_updated_at_version"];

async function scan(version) {
  await tbl.checkout(version);
  const t = await tbl.query().select(cols).toArrow();
  return t.numRows;
}

let best = Infinity;
let rows = 0;
for (let i = 0; i < Number(repeatsArg ?? 3); i++) {
  const t0 = performance.now();
  rows = (await scan(Number(fromArg))) + (await scan(Number(toArg)));
  best = Math.min(best, performance.now() - t0);
}
console.log(JSON.stringify({ scan_ms: best, rows_scanned: rows }));
