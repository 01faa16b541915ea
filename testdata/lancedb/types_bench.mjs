// types_bench.mjs writes the table behind datafile's BenchmarkReadColumns:
// N rows (default 1,000,000) of int64, two strings, float64, timestamp[us],
// list<utf8> and a 64-dim float32 vector, in the default file format (2.2).
//
// Usage: node types_bench.mjs OUT_DIR [N]
// Writes OUT_DIR/db/bench.lance. Rows are appended in batches of 100k so the
// generator's memory stays small; LanceDB still writes one fragment (up to
// 1,048,576 rows) per add, so N ≤ 1,048,576 gives one data file.
import * as path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { createRequire } from "node:module";

const arrow = createRequire(import.meta.url)("apache-arrow");

const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];

function batch(start, n) {
  const id = new BigInt64Array(n);
  const f = new Float64Array(n);
  const ts = new BigInt64Array(n);
  const names = [];
  const cats = [];
  const tags = [];
  const vec = new Float32Array(n * 64);
  for (let i = 0; i < n; i++) {
    const r = start + i;
    id[i] = BigInt(r);
    f[i] = r * 0.25 - 1000;
    ts[i] = 1700000000000000n + BigInt(r) * 1000003n;
    names.push(`user-${r}-${(r * 2654435761) % 1000003}`);
    cats.push(words[r % 8]);
    tags.push(words.slice(r % 5, (r % 5) + (r % 3)));
    for (let k = 0; k < 64; k++) vec[i * 64 + k] = ((r + k) % 1000) / 16;
  }
  const schema = new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false),
    new arrow.Field("name", new arrow.Utf8(), true),
    new arrow.Field("cat", new arrow.Utf8(), true),
    new arrow.Field("f", new arrow.Float64(), true),
    new arrow.Field("ts", new arrow.TimestampMicrosecond(), true),
    new arrow.Field("tags", new arrow.List(new arrow.Field("item", new arrow.Utf8(), true)), true),
    new arrow.Field("vec", new arrow.FixedSizeList(64, new arrow.Field("item", new arrow.Float32(), true)), true),
  ]);
  const child = arrow.makeData({ type: new arrow.Float32(), length: n * 64, data: vec });
  const cols = [
    arrow.makeData({ type: new arrow.Int64(), length: n, data: id }),
    arrow.vectorFromArray(names, new arrow.Utf8()).data[0],
    arrow.vectorFromArray(cats, new arrow.Utf8()).data[0],
    arrow.makeData({ type: new arrow.Float64(), length: n, data: f }),
    arrow.makeData({ type: new arrow.TimestampMicrosecond(), length: n, data: ts }),
    arrow.vectorFromArray(tags, schema.fields[5].type).data[0],
    arrow.makeData({ type: schema.fields[6].type, length: n, child }),
  ];
  return new arrow.Table(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, children: cols }));
}

async function main() {
  const [outDir, nArg] = process.argv.slice(2);
  if (!outDir) {
    console.error("usage: node types_bench.mjs OUT_DIR [N]");
    process.exit(2);
  }
  const n = Number(nArg || 1000000);
  const db = await lancedb.connect(path.join(outDir, "db"));
  const step = 100000;
  const batches = [];
  for (let s = 0; s < n; s += step) batches.push(...batch(s, Math.min(step, n - s)).batches);
  const table = new arrow.Table(batches);
  await db.createTable("bench", table);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
