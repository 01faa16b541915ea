// sqlcases.mjs asks LanceDB 0.39 for reference answers to sqlexpr's
// differential cases.
//
// Usage: node sqlcases.mjs CASES_FILE OUT_DIR [--views] [--zones]
//
// --zones uses the table of zoned timestamps (zonetable.mjs) instead.
//
// It builds one deterministic table covering the column types sqlexpr
// handles, writes the same data to OUT_DIR/data.arrow (Arrow IPC file),
// then for each case line of CASES_FILE runs query().select(..).where(..)
// and writes OUT_DIR/<n>.arrow with LanceDB's result, or records the
// error. OUT_DIR/results.json lists, per case, {ok, error}; with --views
// each accepted case is also created as a materialized view and the entry
// adds its stored `inputs` and the view field's type and nullability
// (or `view_error` when LanceDB refuses to create the view).
//
// Every case that is not already a filter is also run through where() as
// the filter derived from it (filterFor): the expression itself when it
// is boolean, a comparison with a constant of its type when it is a
// number, string, date or timestamp, "(<expr>) IS NOT NULL" otherwise.
// Its entry adds {filter, filter_ok, filter_error}, and OUT_DIR/<n>.f.arrow
// holds the ids it kept.
//
// Case lines are "<mode> <expr>" (the mode letter, e.g. P or X, matters
// only to the Go test). An <expr> starting with "WHERE " is run as a
// filter projecting `id`; any other as the projection {id, v: <expr>}.
// Lines starting with '#' and blank lines are ignored. Case n is the n-th
// case line (0-based).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { createRequire } from "node:module";
import { buildZoneTable } from "./zonetable.mjs";

// LanceDB loads the CommonJS build of apache-arrow; importing the ESM build
// would give a second copy whose tableToIPC silently ignores LanceDB tables.
const arrow = createRequire(import.meta.url)("apache-arrow");

export function buildTable(n) {
  const ids = [];
  const cols = {
    i8: [], i16: [], i32: [], i64: [], u8: [], u16: [], u32: [], u64: [],
    f32: [], f64: [], name: [], kind: [], flag: [], d: [], ts: [], tags: [], st: [], lname: [], nest: [],
    dcat: [],
  };
  const names = ["alice", "Bob", "carol", "Dave_x", "eve%", "", "Ünï", "mallory", "trent", "peggy"];
  const kinds = ["purchase", "refund", "view"];
  for (let i = 0; i < n; i++) {
    ids.push(BigInt(i));
    const isNull = (k) => (i + k) % 7 === 0;
    const s = i - 5; // signed spread around zero
    cols.i8.push(isNull(1) ? null : ((s * 29) % 128));
    cols.i16.push(isNull(2) ? null : s * 1111);
    cols.i32.push(isNull(3) ? null : (i === 4 ? 2147483600 : s * 7));
    cols.i64.push(isNull(4) ? null : BigInt(s) * 1000000007n);
    cols.u8.push(isNull(5) ? null : (i * 37) % 256);
    cols.u16.push(isNull(6) ? null : (i * 4099) % 65536);
    cols.u32.push(isNull(0) ? null : (i * 123457) % 4294967296);
    cols.u64.push(isNull(1) ? null : BigInt(i) * 9000000000000n);
    cols.f32.push(isNull(2) ? null : s * 1.25);
    cols.f64.push(isNull(3) ? null : (i === 6 ? -0.5 : s * 10.75 + 0.125));
    cols.name.push(isNull(4) ? null : names[i % names.length]);
    cols.kind.push(isNull(5) ? null : kinds[i % kinds.length]);
    cols.flag.push(isNull(6) ? null : i % 2 === 0);
    cols.d.push(isNull(0) ? null : 19723 + i * 13); // days since epoch, 2024-01-01 + 13i
    // apache-arrow takes timestamps in ms; the .25 fractions give exact µs.
    cols.ts.push(isNull(1) ? null : 1704067200000 + i * 25200000 + i * 1234 + (i % 4) * 0.25);
    cols.tags.push(isNull(2) ? null : (i % 3 === 0 ? [] : names.slice(i % 5, (i % 5) + (i % 3) + 1).concat(i % 4 === 0 ? [null] : [])));
    cols.nest.push(isNull(5) ? null : { c: i % 6 === 0 ? null : { d: i % 4 === 1 ? null : i - 6, e: `e${i}` } });
    cols.lname.push(isNull(4) ? null : names[(i + 3) % names.length]);
    cols.st.push(isNull(3) ? null : { a: i % 5 === 0 ? null : i * 3, b: i % 4 === 0 ? null : `s${i}` });
    cols.dcat.push(isNull(6) ? null : ["red", "Green", "blue", "red"][i % 4]);
  }
  const vec = (type, values) => arrow.vectorFromArray(values, type);
  const tsType = new arrow.TimestampMicrosecond();
  const stType = new arrow.Struct([
    new arrow.Field("a", new arrow.Int32(), true),
    new arrow.Field("b", new arrow.Utf8(), true),
  ]);
  const nestType = new arrow.Struct([
    new arrow.Field("c", new arrow.Struct([
      new arrow.Field("d", new arrow.Int32(), true),
      new arrow.Field("e", new arrow.Utf8(), true),
    ]), true),
  ]);
  const listType = new arrow.List(new arrow.Field("item", new arrow.Utf8(), true));
  const fields = [
    ["id", new arrow.Int64(), false, ids],
    ["i8", new arrow.Int8(), true, cols.i8],
    ["i16", new arrow.Int16(), true, cols.i16],
    ["i32", new arrow.Int32(), true, cols.i32],
    ["i64", new arrow.Int64(), true, cols.i64],
    ["u8", new arrow.Uint8(), true, cols.u8],
    ["u16", new arrow.Uint16(), true, cols.u16],
    ["u32", new arrow.Uint32(), true, cols.u32],
    ["u64", new arrow.Uint64(), true, cols.u64],
    ["f32", new arrow.Float32(), true, cols.f32],
    ["f64", new arrow.Float64(), true, cols.f64],
    ["name", new arrow.Utf8(), true, cols.name],
    ["kind", new arrow.Utf8(), true, cols.kind],
    ["flag", new arrow.Bool(), true, cols.flag],
    ["d", new arrow.DateDay(), true, cols.d],
    ["ts", tsType, true, cols.ts],
    ["tags", listType, true, cols.tags],
    ["st", stType, true, cols.st],
    ["lname", new arrow.LargeUtf8(), true, cols.lname],
    ["nest", nestType, true, cols.nest],
    ["tsz", new arrow.TimestampMicrosecond("UTC"), true, cols.ts],
    ["dcat", new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()), true, cols.dcat],
  ];
  const schema = new arrow.Schema(fields.map(([nm, t, nl]) => new arrow.Field(nm, t, nl)));
  const data = {};
  for (const [nm, t, , values] of fields) {
    let v = values;
    if (t instanceof arrow.DateDay) {
      v = values.map((x) => (x === null ? null : new Date(x * 86400000)));
    }
    data[nm] = vec(t, v);
  }
  return new arrow.Table(schema, arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length: n,
    nullCount: 0,
    children: schema.fields.map((f) => data[f.name].data[0]),
  }));
}

// filterFor derives a filter from a projection whose LanceDB result type
// is t (undefined when LanceDB refused the projection), so that the
// filter's rows depend on the expression's values where possible.
export function filterFor(expr, t) {
  const P = arrow.DataType;
  if (t !== undefined) {
    if (P.isBool(t)) return expr;
    if (P.isInt(t) || P.isFloat(t)) return `(${expr}) > 0`;
    if (P.isUtf8(t) || P.isLargeUtf8(t)) return `(${expr}) > 'm'`;
    if (P.isDate(t)) return `(${expr}) > DATE '2024-03-01'`;
    if (P.isTimestamp(t)) return `(${expr}) > TIMESTAMP '2024-01-02 12:00:00'`;
  }
  return `(${expr}) IS NOT NULL`;
}

export function readCases(file) {
  const out = [];
  for (const raw of fs.readFileSync(file, "utf8").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const kind = line[0];
    const body = line.slice(2).trim();
    out.push({ kind, body });
  }
  return out;
}

async function main() {
  const [casesFile, outDir, ...flags] = process.argv.slice(2);
  const withViews = flags.includes("--views");
  const zones = flags.includes("--zones");
  if (!casesFile || !outDir) {
    console.error("usage: node sqlcases.mjs CASES_FILE OUT_DIR");
    process.exit(2);
  }
  fs.mkdirSync(outDir, { recursive: true });
  const table = zones ? buildZoneTable(arrow) : buildTable(12);
  fs.writeFileSync(path.join(outDir, "data.arrow"), arrow.tableToIPC(table, "file"));
  // A memory-backed directory when there is one: hundreds of small
  // tables are created, and disk syncs would dominate the run time.
  const tmpRoot = fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
  const dbDir = fs.mkdtempSync(path.join(tmpRoot, "sqlcases-"));
  try {
    const db = await lancedb.connect(dbDir);
    const tbl = await db.createTable("t", table, {
      storageOptions: { new_table_enable_stable_row_ids: "true" },
    });
    const cases = readCases(casesFile);
    const results = new Array(cases.length);
    const runCase = async (n) => {
      const c = cases[n];
      const isFilter = c.body.startsWith("WHERE ");
      try {
        let q = tbl.query();
        if (isFilter) {
          q = q.select(["id"]).where(c.body.slice(6));
        } else {
          q = q.select({ id: "id", v: c.body });
        }
        const res = await q.toArrow();
        fs.writeFileSync(path.join(outDir, `${n}.arrow`), arrow.tableToIPC(res, "file"));
        const r = { ok: true };
        if (!isFilter) r.type = res.schema.fields.find((x) => x.name === "v").type;
        if (withViews) {
          // The same expression as a materialized view: its stored inputs
          // and the view schema's field for it.
          try {
            const opts = isFilter
              ? { select: ["id"], where: c.body.slice(6) }
              : { select: [["v", c.body]] };
            const mv = await db.createMaterializedView(`v${n}`, "t", opts);
            r.inputs = (await mv.definition()).inputs;
            const f = (await (await db.openTable(`v${n}`)).schema()).fields.find((x) => x.name === "v");
            if (f) r.view_field = { type: String(f.type), nullable: f.nullable };
          } catch (e) {
            r.view_error = String(e && e.message ? e.message : e);
          }
        }
        results[n] = r;
      } catch (e) {
        results[n] = { ok: false, error: String(e && e.message ? e.message : e) };
      }
      if (!isFilter) {
        const r = results[n];
        r.filter = filterFor(c.body, r.type);
        try {
          const res = await tbl.query().select(["id"]).where(r.filter).toArrow();
          fs.writeFileSync(path.join(outDir, `${n}.f.arrow`), arrow.tableToIPC(res, "file"));
          r.filter_ok = true;
        } catch (e) {
          r.filter_ok = false;
          r.filter_error = String(e && e.message ? e.message : e);
        }
        delete r.type;
      }
    };
    // A few cases at a time: LanceDB's calls are asynchronous.
    let next = 0;
    const worker = async () => {
      while (next < cases.length) await runCase(next++);
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    fs.writeFileSync(path.join(outDir, "results.json"), JSON.stringify(results));
  } finally {
    fs.rmSync(dbDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
