// sqlbench.mjs times LanceDB 0.39 on sqlexpr's benchmark query, so the Go
// benchmark can print both figures from the same run.
//
// Usage: node sqlbench.mjs ROWS ITERATIONS
//
// The table is generated with the same formulas as benchData in
// sqlexpr/bench_test.go: id = i, user = "user<i % 1000>",
// kind = ["purchase", "refund", "view"][i % 3], amount = (i % 1000) / 4
// (NULL when i % 97 == 0). Prints one JSON line:
// {"rows_out": n, "ms_per_query": m, "iterations": k}.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createRequire } from "node:module";
import * as lancedb from "@lancedb/lancedb";

// The CommonJS build is the one LanceDB itself loads.
const arrow = createRequire(import.meta.url)("apache-arrow");

const [rowsArg, itersArg] = process.argv.slice(2);
const rows = Number(rowsArg ?? 1000000);
const iters = Number(itersArg ?? 5);
const kinds = ["purchase", "refund", "view"];
const id = new BigInt64Array(rows);
const user = new Array(rows);
const kind = new Array(rows);
const amount = new Array(rows);
for (let i = 0; i < rows; i++) {
  id[i] = BigInt(i);
  user[i] = `user${i % 1000}`;
  kind[i] = kinds[i % 3];
  amount[i] = i % 97 === 0 ? null : (i % 1000) / 4;
}
const table = arrow.tableFromArrays({
  id,
  user: arrow.vectorFromArray(user, new arrow.Utf8()),
  kind: arrow.vectorFromArray(kind, new arrow.Utf8()),
  amount: arrow.vectorFromArray(amount, new arrow.Float64()),
});
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sqlbench-"));
try {
  const db = await lancedb.connect(dir);
  const tbl = await db.createTable("t", table);
  const run = async () => tbl.query()
    .select({ id: "id", user: "user", amount_cents: "amount * 100" })
    .where("kind = 'purchase' AND amount > 10")
    .toArrow();
  let out = await run(); // warm-up: opens files, fills the page cache
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < iters; k++) out = await run();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / iters;
  console.log(JSON.stringify({ rows_out: out.numRows, ms_per_query: ms, iterations: iters }));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
