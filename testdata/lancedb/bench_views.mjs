// LanceDB's side of issue 10's view benchmarks, on the peer workload
// (lib/events.mjs): creates `events` (batches of 100k rows, stable row ids)
// and the views V1, V2, V3, then for each operation — update of 1 random
// row (amount = 100 - amount), delete of 1 random row, append of 1 row,
// append of 100k rows, no-op, full rebuild — applies it to the source and
// times LanceDB's own refresh of every view: wall time, peak RSS of this
// process during the refresh, view versions committed.
//
//   node --expose-gc bench_views.mjs --dir DIR [--rows 5000000] [--batch 100000]
//        [--reps 3] [--seed 1] [--views V1,V2,V3] [--reuse]
//
// --reuse keeps an existing DIR/events.lance this script wrote with the same
// --rows and --batch, restored to its state before any operation (and
// drops and recreates the views). Prints one JSON object on stdout:
//   {lancedb, rows, batch, seed, create: {write_ms, commits, version},
//    views: {V1: {select, where, limit}, ...},
//    initial: {V1: REFRESH, ...},
//    ops: [{op, rep, commit_ms, source_version, refresh: {V1: REFRESH, ...}}, ...],
//    summary: {OP: {V1: {median_ms, min_ms, max_ms, peak_rss_kb, view_versions, modes}}}}
// REFRESH = {mode, rows_written, source_version, version, ms, rss_before_kb,
// peak_rss_kb, view_versions}. Progress goes to stderr.
import fs from "node:fs";
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { toJSON } from "./lib/json.mjs";
import { EVENT_VIEWS, createEvents, eventsTable, idStream, measureRefresh, ms } from "./lib/events.mjs";

const OPS = ["update_1", "delete_1", "append_1", "append_100k", "no_op", "full"];

function parseArgs(argv) {
  const o = { rows: 5000000, batch: 100000, reps: 3, seed: 1, views: ["V1", "V2", "V3"], reuse: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], v = () => argv[++i];
    if (a === "--dir") o.dir = v();
    else if (a === "--rows") o.rows = Number(v());
    else if (a === "--batch") o.batch = Number(v());
    else if (a === "--reps") o.reps = Number(v());
    else if (a === "--seed") o.seed = Number(v());
    else if (a === "--views") o.views = v().split(",");
    else if (a === "--reuse") o.reuse = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.dir) throw new Error("usage: bench_views.mjs --dir DIR [--rows N] [--batch N] [--reps N] [--seed N] [--views V1,V2,V3] [--reuse]");
  for (const k of ["rows", "batch", "reps", "seed"]) if (!Number.isSafeInteger(o[k]) || o[k] < (k === "seed" ? 0 : 1)) throw new Error(`--${k} must be a positive integer`);
  for (const v of o.views) if (!EVENT_VIEWS[v]) throw new Error(`unknown view ${v} (V1, V2, V3)`);
  return o;
}

const log = (s) => process.stderr.write(`bench_views: ${s}\n`);

function lancedbVersion() {
  const pkg = new URL("./node_modules/@lancedb/lancedb/package.json", import.meta.url);
  return JSON.parse(fs.readFileSync(pkg, "utf8")).version;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  fs.mkdirSync(o.dir, { recursive: true });
  const db = await lancedb.connect(o.dir);
  const out = { lancedb: lancedbVersion(), rows: o.rows, batch: o.batch, seed: o.seed };

  let events = null;
  if (o.reuse && (await db.tableNames()).includes("events")) {
    // A table this script wrote has its last batch at version
    // ceil(rows / batch); a previous run's operations came after it, so
    // restore that version (same fragments, same row ids) instead of
    // writing 5M rows again.
    const base = Math.ceil(o.rows / o.batch);
    events = await db.openTable("events");
    const versions = (await events.listVersions()).map((v) => v.version);
    if (versions.includes(base)) {
      await events.checkout(base);
      if (await events.countRows() === o.rows) {
        if (versions.at(-1) !== base) await events.restore();
        else await events.checkoutLatest();
        out.create = { reused: true, restored_from: base, version: await events.version() };
      } else events = null;
    } else events = null;
  }
  if (events === null) {
    out.create = await createEvents(db, "events", o.rows, o.batch, o.seed, (n, total) => { if (n % 1000000 === 0 || n === total) log(`wrote ${n}/${total} rows`); });
    events = await db.openTable("events");
  }

  out.views = {};
  out.initial = {};
  for (const v of o.views) {
    if ((await db.tableNames()).includes(v)) await db.dropTable(v);
    await db.createMaterializedView(v, "events", EVENT_VIEWS[v]);
    out.views[v] = EVENT_VIEWS[v];
    out.initial[v] = await measureRefresh(db, v);
    log(`${v}: initial ${out.initial[v].mode} ${out.initial[v].rows_written} rows in ${out.initial[v].ms.toFixed(0)} ms`);
  }

  const updates = idStream(o.rows, o.seed, 0), deletes = idStream(o.rows, o.seed, 1);
  let nextID = o.rows;
  out.ops = [];
  for (let rep = 1; rep <= o.reps; rep++) {
    for (const op of OPS) {
      const t0 = process.hrtime.bigint();
      switch (op) {
        case "update_1": await events.update({ where: `id = ${updates()}`, valuesSql: { amount: "100 - amount" } }); break;
        case "delete_1": await events.delete(`id = ${deletes()}`); break;
        case "append_1": await events.add(eventsTable(nextID, 1, o.seed)); nextID += 1; break;
        case "append_100k": await events.add(eventsTable(nextID, 100000, o.seed)); nextID += 100000; break;
        case "no_op": case "full": break;
      }
      const entry = { op, rep, commit_ms: ms(t0), source_version: await events.version(), refresh: {} };
      for (const v of o.views) entry.refresh[v] = await measureRefresh(db, v, op === "full" ? { full: true } : {});
      log(`rep ${rep} ${op}: ${o.views.map((v) => `${v} ${entry.refresh[v].mode} ${entry.refresh[v].ms.toFixed(1)} ms`).join(", ")}`);
      out.ops.push(entry);
    }
  }

  out.summary = {};
  for (const op of OPS) {
    out.summary[op] = {};
    for (const v of o.views) {
      const rs = out.ops.filter((e) => e.op === op).map((e) => e.refresh[v]);
      out.summary[op][v] = {
        median_ms: Math.round(median(rs.map((r) => r.ms)) * 1e3) / 1e3, min_ms: Math.min(...rs.map((r) => r.ms)), max_ms: Math.max(...rs.map((r) => r.ms)),
        peak_rss_kb: Math.max(...rs.map((r) => r.peak_rss_kb)), view_versions: median(rs.map((r) => r.view_versions)),
        modes: [...new Set(rs.map((r) => r.mode))],
      };
    }
  }
  process.stdout.write(toJSON(out, 3));
}

main().catch((e) => {
  process.stderr.write(`bench_views: ${e.stack ?? e}\n`);
  process.exit(1);
});
