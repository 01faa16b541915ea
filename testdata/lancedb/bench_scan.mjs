// The LanceDB side of mvd's scan and take benchmarks (bench/): it writes the
// scan benchmark table and times LanceDB reading it, so that mvd's figures
// are reported as ratios against LanceDB measured in the same run.
//
//   node bench_scan.mjs make DIR [ROWS]       writes DIR/bench_scan.lance (1M rows by default)
//   node bench_scan.mjs scan DIR [REPEATS]    times query().toArrow() of the whole table
//   node bench_scan.mjs stream DIR [REPEATS]  times iterating query()'s batches, dropping each
//   node bench_scan.mjs take DIR N [REPEATS]  times takeRowIds of N random stable row ids
//   node bench_scan.mjs rows DIR ID...        prints the rows with those ids as JSON
//   node bench_scan.mjs write DIR OUT [REPEATS] times createTable of DIR's rows (read into
//                                             memory first, untimed) under OUT, and prints
//                                             the bytes of the data files it wrote
//
// scan, stream and take print one JSON line: `ms` is the best of REPEATS
// (default 3) after one untimed warm-up run, `cpu_ms` the least CPU time of
// those runs, `peak_rss_bytes` how far the warm-up raised the RSS
// high-water mark. A wrong row count is a failure (exit 1). DIR is a table
// directory (…/name.lance) for scan, stream, take and rows. take uses
// table.takeRowIds: as fast as query().where("_rowid IN (…)") in 0.39
// (measured on the 5M table: 1.2 vs 1.2 ms for 1 id, 25.5 vs 25.9 ms for
// 1000) and says what it means.
//
// Every value is a pure function of the row id, so every run writes the same
// table; `rows` is LanceDB's own reading of some rows, which mvd's test
// compares with its scan.
import fs from "node:fs";
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { arrow } from "./lib/arrow.mjs";
import { mix32 } from "./lib/data.mjs";

/** Name of the table `make` writes under DIR. */
const TABLE = "bench_scan";
const DIM = 64;
const BATCH = 65536;

/** The scan benchmark schema: every type mvd's views read often. */
const SCHEMA = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("category", new arrow.Utf8(), true),
  new arrow.Field("text", new arrow.Utf8(), true),
  new arrow.Field("score", new arrow.Float64(), true),
  new arrow.Field("ts", new arrow.TimestampMicrosecond(), true),
  new arrow.Field("tags", new arrow.List(new arrow.Field("item", new arrow.Utf8(), true)), true),
  new arrow.Field("vec", new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true)), true),
]);

const CATEGORIES = ["red", "green", "blue", "cyan", "magenta", "yellow", "black", "white", "grey", "orange", "purple", "brown"];
const TAGS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
// 2024-01-01T00:00:00Z in microseconds.
const TS0 = 1704067200000000n;

/** The row for `id`; the Go test's expectations come from LanceDB reading these back. */
function rowFor(id) {
  const h = mix32(id, 7), g = mix32(id, 8);
  return {
    id,
    category: h % 23 === 0 ? null : CATEGORIES[h % CATEGORIES.length],
    // ~40 bytes, unique per id.
    text: g % 29 === 0 ? null : `row-${String(id).padStart(8, "0")}-${g.toString(16).padStart(8, "0")}-lorem-ipsum-dol`,
    score: h % 13 === 0 ? null : ((h % 1000000) - 500000) / 1024,
    ts: g % 31 === 0 ? null : TS0 + BigInt(id) * 1000003n,
    // null for one row in 37, else 0–4 tags.
    tags: g % 37 === 0 ? null : Array.from({ length: (h >>> 8) % 5 }, (_, k) => TAGS[(h >>> (12 + 3 * k)) & 7]),
    vecNull: h % 41 === 0,
  };
}

function bitSet(bits, i) { bits[i >> 3] |= 1 << (i & 7); }

/** One RecordBatch of SCHEMA for ids [start, start+n), built into Arrow buffers directly (fast). */
function makeBatch(start, n) {
  const ids = new BigInt64Array(n);
  const catBits = new Uint8Array((n + 7) >> 3), catOff = new Int32Array(n + 1), cats = [];
  const txtBits = new Uint8Array((n + 7) >> 3), txtOff = new Int32Array(n + 1), txts = [];
  const scBits = new Uint8Array((n + 7) >> 3), scores = new Float64Array(n);
  const tsBits = new Uint8Array((n + 7) >> 3), tss = new BigInt64Array(n);
  const tagBits = new Uint8Array((n + 7) >> 3), tagOff = new Int32Array(n + 1), tagStr = [], tagStrOff = [0];
  const vecBits = new Uint8Array((n + 7) >> 3), vec = new Float32Array(n * DIM);
  let nulls = { cat: 0, txt: 0, sc: 0, ts: 0, tag: 0, vec: 0 };
  let catBytes = 0, txtBytes = 0, tagItems = 0, tagBytes = 0;
  for (let i = 0; i < n; i++) {
    const r = rowFor(start + i);
    ids[i] = BigInt(r.id);
    if (r.category === null) nulls.cat++; else { bitSet(catBits, i); cats.push(r.category); catBytes += r.category.length; }
    catOff[i + 1] = catBytes;
    if (r.text === null) nulls.txt++; else { bitSet(txtBits, i); txts.push(r.text); txtBytes += r.text.length; }
    txtOff[i + 1] = txtBytes;
    if (r.score === null) nulls.sc++; else { bitSet(scBits, i); scores[i] = r.score; }
    if (r.ts === null) nulls.ts++; else { bitSet(tsBits, i); tss[i] = r.ts; }
    if (r.tags === null) nulls.tag++;
    else {
      bitSet(tagBits, i);
      for (const t of r.tags) { tagStr.push(t); tagBytes += t.length; tagStrOff.push(tagBytes); tagItems++; }
    }
    tagOff[i + 1] = tagItems;
    if (r.vecNull) nulls.vec++;
    else {
      bitSet(vecBits, i);
      let s = mix32(r.id, 9);
      for (let d = 0; d < DIM; d++) {
        s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
        vec[i * DIM + d] = (s >>> 8) / 16777216 - 0.5;
      }
    }
  }
  const text = (parts) => new Uint8Array(Buffer.from(parts.join(""), "latin1"));
  const f = SCHEMA.fields;
  const tagItemsData = arrow.makeData({ type: f[5].type.children[0].type, length: tagItems, nullCount: 0, valueOffsets: Int32Array.from(tagStrOff), data: text(tagStr) });
  const vecItems = arrow.makeData({ type: f[6].type.children[0].type, length: n * DIM, nullCount: 0, data: vec });
  const children = [
    arrow.makeData({ type: f[0].type, length: n, nullCount: 0, data: ids }),
    arrow.makeData({ type: f[1].type, length: n, nullCount: nulls.cat, nullBitmap: catBits, valueOffsets: catOff, data: text(cats) }),
    arrow.makeData({ type: f[2].type, length: n, nullCount: nulls.txt, nullBitmap: txtBits, valueOffsets: txtOff, data: text(txts) }),
    arrow.makeData({ type: f[3].type, length: n, nullCount: nulls.sc, nullBitmap: scBits, data: scores }),
    arrow.makeData({ type: f[4].type, length: n, nullCount: nulls.ts, nullBitmap: tsBits, data: tss }),
    arrow.makeData({ type: f[5].type, length: n, nullCount: nulls.tag, nullBitmap: tagBits, valueOffsets: tagOff, child: tagItemsData }),
    arrow.makeData({ type: f[6].type, length: n, nullCount: nulls.vec, nullBitmap: vecBits, child: vecItems }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(SCHEMA.fields), length: n, nullCount: 0, children });
  return new arrow.RecordBatch(SCHEMA, struct);
}

async function openTable(tableDir) {
  const db = await lancedb.connect(path.dirname(path.resolve(tableDir)));
  return db.openTable(path.basename(tableDir).replace(/\.lance$/, ""));
}

/**
 * Best of `repeats` timed runs of fn(prep()), after one untimed warm-up;
 * prep's work (drawing ids) is not timed. fn returns {rows, …}; a wrong row
 * count throws. cpuMs is the least CPU time (all threads) of a timed run:
 * on a shared machine it is steadier than wall time. peakRss is how far the
 * warm-up run raised the RSS high-water mark above the RSS before it (the
 * mark is process-wide, so only the first run can be measured).
 */
async function best(repeats, want, prep, fn) {
  let ms = Infinity, cpuMs = Infinity, out, peakRss = 0;
  for (let i = 0; i <= repeats; i++) {
    const arg = prep();
    const rss0 = process.memoryUsage.rss();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    out = await fn(arg);
    const dt = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (i === 0) peakRss = process.resourceUsage().maxRSS * 1024 - rss0;
    if (out.rows !== want) throw new Error(`read ${out.rows} rows, want ${want}`);
    if (i > 0) {
      ms = Math.min(ms, dt);
      cpuMs = Math.min(cpuMs, (c.user + c.system) / 1000);
    }
  }
  return { ms, cpuMs, peakRss, ...out };
}

/** Arrow data bytes of a table: the sum of its buffers' lengths. */
function arrowBytes(table) {
  let n = 0;
  const visit = (d) => {
    for (const b of [d.values, d.valueOffsets, d.nullBitmap, d.typeIds]) if (b) n += b.byteLength;
    for (const c of d.children) visit(c);
  };
  for (const batch of table.batches) visit(batch.data);
  return n;
}

/**
 * n distinct ids in [0, total) drawn with a 32-bit LCG from seed, in draw
 * order; integer arithmetic only, so mvd's benchmark (randomIDs in
 * bench/take_test.go) draws exactly the same ids.
 */
function randomIds(total, n, seed) {
  const ids = new Set();
  const t = BigInt(total);
  let s = seed >>> 0;
  while (ids.size < n) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    ids.add((BigInt(s) * t) >> 32n);
  }
  return [...ids];
}

async function main() {
  const [cmd, dir, ...rest] = process.argv.slice(2);
  if (!cmd || !dir) {
    console.error("usage: node bench_scan.mjs make DIR [ROWS] | scan|stream DIR [REPEATS] | take DIR N [REPEATS] | rows DIR ID...");
    process.exit(2);
  }
  switch (cmd) {
    case "make": {
      const rows = Number(rest[0] ?? 1000000);
      const tb = performance.now();
      const batches = [];
      for (let at = 0; at < rows; at += BATCH) batches.push(makeBatch(at, Math.min(BATCH, rows - at)));
      const buildMs = performance.now() - tb;
      const db = await lancedb.connect(dir);
      const t0 = performance.now();
      await db.createTable(TABLE, new arrow.Table(SCHEMA, batches), {
        mode: "overwrite",
        storageOptions: { new_table_enable_stable_row_ids: "true" },
      });
      const tbl = await db.openTable(TABLE);
      const n = await tbl.countRows();
      if (n !== rows) throw new Error(`wrote ${n} rows, want ${rows}`);
      console.log(JSON.stringify({ table: path.join(dir, `${TABLE}.lance`), rows: n, build_ms: buildMs, write_ms: performance.now() - t0 }));
      break;
    }
    case "scan": {
      const tbl = await openTable(dir);
      const want = await tbl.countRows();
      const r = await best(Number(rest[0] ?? 3), want, () => null, async () => {
        const t = await tbl.query().toArrow();
        return { rows: t.numRows, table: t };
      });
      console.log(JSON.stringify({ ms: r.ms, cpu_ms: r.cpuMs, rows: r.rows, bytes: arrowBytes(r.table), peak_rss_bytes: r.peakRss }));
      break;
    }
    case "stream": {
      const tbl = await openTable(dir);
      const want = await tbl.countRows();
      const r = await best(Number(rest[0] ?? 3), want, () => null, async () => {
        let rows = 0, bytes = 0;
        for await (const batch of tbl.query()) {
          rows += batch.numRows;
          bytes += arrowBytes({ batches: [batch] });
        }
        return { rows, bytes };
      });
      console.log(JSON.stringify({ ms: r.ms, cpu_ms: r.cpuMs, rows: r.rows, bytes: r.bytes, peak_rss_bytes: r.peakRss }));
      break;
    }
    case "take": {
      const n = Number(rest[0]);
      if (!(n > 0)) throw new Error("take needs N > 0");
      const tbl = await openTable(dir);
      const total = await tbl.countRows();
      // A fresh draw per repeat so no run is served by a warmer cache than mvd's.
      let seed = 12345;
      const r = await best(Number(rest[1] ?? 3), n, () => randomIds(total, n, seed++), async (ids) => {
        const t = await tbl.takeRowIds(ids).toArrow();
        return { rows: t.numRows, table: t, ids };
      });
      checkTakenIds(r.table, r.ids);
      console.log(JSON.stringify({ ms: r.ms, cpu_ms: r.cpuMs, rows: r.rows, api: "takeRowIds" }));
      break;
    }
    case "write": {
      // The rows are read once, outside the timing; each run writes a new
      // table (stable row ids, LanceDB's default file version) as a user's
      // createTable would.
      const out = rest[0];
      if (!out) throw new Error("write needs OUT");
      const src = await openTable(dir);
      const data = await src.query().toArrow();
      const db = await lancedb.connect(out);
      let run = 0, last = "";
      const r = await best(Number(rest[1] ?? 3), data.numRows, () => `w${run++}`, async (name) => {
        const t = await db.createTable(name, data, { mode: "overwrite", storageOptions: { new_table_enable_stable_row_ids: "true" } });
        last = name;
        return { rows: await t.countRows() };
      });
      const dataDir = path.join(out, `${last}.lance`, "data");
      let bytes = 0;
      for (const f of fs.readdirSync(dataDir)) bytes += fs.statSync(path.join(dataDir, f)).size;
      console.log(JSON.stringify({ ms: r.ms, cpu_ms: r.cpuMs, rows: r.rows, bytes, table: path.join(out, `${last}.lance`) }));
      break;
    }
    case "rows": {
      const tbl = await openTable(dir);
      const ids = rest.map((s) => BigInt(s));
      const t = await tbl.takeRowIds(ids).withRowId().toArrow();
      const ts = rawTimestamps(t.getChild("ts"));
      const out = [];
      let i = 0;
      for (const row of t) out.push({ ...jsonRow(row.toJSON()), ts: ts[i++] });
      console.log(JSON.stringify(out));
      break;
    }
    default:
      console.error(`bench_scan.mjs: unknown command ${cmd}`);
      process.exit(2);
  }
}

/**
 * Fails unless the last take returned exactly the ids asked for, where the
 * table's id column is its stable row id (bench_5m); outside the timing.
 */
function checkTakenIds(table, ids) {
  const col = table.getChild("id");
  if (!col) return;
  const got = new Set();
  for (const d of col.data) for (let i = 0; i < d.length; i++) got.add(d.values[d.offset + i]);
  if (got.size !== ids.length || ids.some((id) => !got.has(id))) {
    throw new Error(`take returned ${got.size} distinct ids, not the ${ids.length} asked for`);
  }
}

/**
 * The raw int64 microseconds of a timestamp column as decimal strings (or
 * null): apache-arrow's row accessors turn them into lossy milliseconds.
 */
function rawTimestamps(vec) {
  const out = [];
  for (const d of vec.data) {
    for (let i = 0; i < d.length; i++) out.push(d.getValid(i) ? d.values[d.offset + i].toString() : null);
  }
  return out;
}

/** A row as JSON: bigints as decimal strings, vectors and lists as arrays. */
function jsonRow(r) {
  const o = {};
  for (const [k, v] of Object.entries(r)) {
    if (v === null || v === undefined) o[k] = null;
    else if (typeof v === "bigint") o[k] = v.toString();
    else if (typeof v === "object" && typeof v.toArray === "function") o[k] = Array.from(v.toArray(), (x) => (typeof x === "bigint" ? x.toString() : x));
    else o[k] = v;
  }
  return o;
}

main().catch((e) => {
  console.error(`bench_scan.mjs: ${e.stack || e}`);
  process.exit(1);
});
