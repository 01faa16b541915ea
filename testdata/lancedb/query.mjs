// Runs one query with LanceDB and prints its answer, for differential tests
// of `mvd table scan --select/--where`.
//
//   node query.mjs TABLE_DIR QUERY_JSON
//
// QUERY_JSON: {"select": [[alias, sql], ...] | null, "where": sql | null,
// "version": n | null}. Prints one JSON object: {"schema": canonical schema,
// "rows": [...]} (values as in answers files), or {"error": message} when
// LanceDB refuses the query.
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { canonicalSchema } from "./lib/schema.mjs";
import { tableRows } from "./lib/values.mjs";
import { toJSON } from "./lib/json.mjs";

const [tableDir, queryJSON] = process.argv.slice(2);
if (!tableDir || !queryJSON) {
  console.error("usage: node query.mjs TABLE_DIR QUERY_JSON");
  process.exit(2);
}
const q = JSON.parse(queryJSON);
const db = await lancedb.connect(path.dirname(path.resolve(tableDir)));
const tbl = await db.openTable(path.basename(tableDir).replace(/\.lance$/, ""));
if (q.version != null) await tbl.checkout(q.version);
let query = tbl.query();
if (q.select) query = query.select(new Map(q.select));
if (q.where) query = query.where(q.where);
let result;
try {
  result = await query.toArrow();
} catch (e) {
  console.log(JSON.stringify({ error: String(e.message ?? e) }));
  process.exit(0);
}
const schema = canonicalSchema(result.schema);
const rows = tableRows(result, result.schema.fields.map((f) => f.name));
console.log(toJSON({ schema, rows }));
