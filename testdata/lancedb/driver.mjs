// A long-lived LanceDB 0.39 process for mvd's view tests: reads one JSON
// command per line on stdin and answers each with one JSON line on stdout,
// in order. Go drives it through internal/lancedbtest (StartDriver).
//
//   node driver.mjs DB_DIR            (commands on stdin, answers on stdout)
//   node driver.mjs DB_DIR < cmds.jsonl   (the one-shot form: runs a file of
//                                          commands, one answer line each)
//
// Request:  {"id": N, "cmd": "...", ...arguments}
// Answer:   {"id": N, "ok": true, "ms": wall ms of the command, "result": ...}
//           {"id": N, "ok": false, "ms": ..., "error": "LanceDB's message"}
//
// Every command opens its table afresh by name, so it always sees the latest
// version, including commits made by mvd meanwhile. Values in and out follow
// lib/rows.mjs and lib/values.mjs: 64-bit integers as exact integers on the
// way out and decimal strings (or safe numbers) on the way in, RFC 3339
// timestamps, shortest round-trip floats, "NaN"/"Infinity" strings. Reads
// return every row as JSON: meant for test-sized tables, not 5M rows.
//
// Commands (arguments → result):
//   ping                                           → "pong"
//   connect       dir storage_options?             → null: later commands work on DB_DIR = dir
//                                                  (s3://… with LanceDB's storageOptions)
//   create_table  name schema rows? stable_row_ids?(true) mode?("create"|"overwrite")
//                 storage_options?                 → {version}
//   add           table rows mode?("append"|"overwrite") → {version}
//   delete        table where                      → {version}
//   update        table where? values{col: sql}    → {version, rows_updated}
//   merge_insert  table on rows matched_update? not_matched_insert?
//                 not_matched_by_source_delete? by_source_where?
//                                                  → {version, inserted, updated, deleted}
//   optimize      table cleanup_older_than_ms?     → {version}
//   add_columns   table columns[{name, value_sql}] → {version}
//   drop_columns  table columns[]                  → {version}
//   create_index  table column index_type?("btree"|"bitmap"|"label_list") → {version}
//   tag_create    table name version               → null (LanceDB's tags().create)
//   list_indices  table                            → [{name, type, columns}]
//   restore       table version                    → {version}
//   drop_table    name                             → null
//   table_names                                    → [names]
//   version       table                            → number
//   versions      table                            → [numbers]
//   schema        table version?                   → canonical schema (lib/schema.mjs)
//   count         table version? where?            → number
//   read          table version? row_id? special? columns? where?
//                                                  → {version, schema, rows}
//   evaluate      table version? projections[[out, sql]] filter? limit?
//                                                  → {version, rows, schema}: the projections (plus
//                                                    __source_row_id = _rowid) of the rows
//                                                    matching filter, in scan order: a view
//                                                    definition evaluated by LanceDB's query
//                                                    engine (with limit: the query's first
//                                                    limit rows, what a capped view holds)
//   create_view   name source select? where? limit? → definition (as definition())
//   view_definition name                           → definition()
//   refresh       name full? source_version?       → {mode, rows_written, source_version, version}
//   list_views                                     → [names]
//   create_events name rows batch?(100000) seed?(1) → {rows, batch, commits, write_ms, version}
//                                                  (the benchmark source, lib/events.mjs)
//   append_events table start n seed?(1)           → {version}
//   event_views                                    → {V1: {select, where?, limit?}, ...}
//   measure_refresh name full? source_version?     → {mode, rows_written, source_version, version,
//                                                    ms, rss_before_kb, peak_rss_kb, view_versions}
//   rss_reset                                      → null (resets the peak RSS counter)
//   rss                                            → {rss_kb, peak_kb}
//   sleep         ms                               → null after ms (tests of cancellation)
//   exit                                           → null, then the process ends
import readline from "node:readline";
import * as lancedb from "@lancedb/lancedb";
import { SPECIAL } from "./lib/answers.mjs";
import { toJSON } from "./lib/json.mjs";
import { EVENT_VIEWS, createEvents, eventsTable, measureRefresh, resetPeak, vmStatus } from "./lib/events.mjs";
import { schemaFromCanonical, tableFromRows } from "./lib/rows.mjs";
import { canonicalSchema } from "./lib/schema.mjs";
import { tableRows } from "./lib/values.mjs";

const dir = process.argv[2];
if (!dir) {
  process.stderr.write("usage: node driver.mjs DB_DIR\n");
  process.exit(2);
}
let db = await lancedb.connect(dir);

const STABLE = { new_table_enable_stable_row_ids: "true" };

function need(o, key) {
  if (o[key] === undefined || o[key] === null) throw new Error(`driver: ${o.cmd}: missing argument ${key}`);
  return o[key];
}

// Tables held open (the hold command): a long-lived writer keeps its
// table open between commits, as applications do, instead of opening it
// (a listing of its versions and a read of its manifest) for each one.
const held = new Map();

async function open(o, key = "table") {
  const name = need(o, key);
  // A call at a version checks its handle out there: never the held one.
  if (o.version != null) return db.openTable(name);
  return held.get(name) ?? db.openTable(name);
}

async function dataFor(tbl, rows) {
  return tableFromRows(await tbl.schema(), rows ?? []);
}

/** The definition as LanceDB's Node definition() returns it. */
async function definition(view) {
  // Absent filter/limit are undefined in Node: leave them out.
  const d = await view.definition();
  return Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined));
}

function refreshResult(r) {
  return { mode: r.mode, rows_written: r.rowsWritten, source_version: r.sourceVersion, version: r.version };
}

// Reads every row of a table (in scan order) at `version` or the latest.
async function read(o) {
  const tbl = await open(o);
  if (o.version != null) await tbl.checkout(o.version);
  const schema = await tbl.schema();
  const cols = o.columns ?? schema.fields.map((f) => f.name);
  const extra = o.special ? SPECIAL : o.row_id ? ["_rowid"] : [];
  let q = tbl.query().select([...cols, ...extra]);
  if (o.where) q = q.where(o.where);
  const res = await q.toArrow();
  // An empty result may carry no columns at all.
  const rows = res.numRows === 0 ? [] : tableRows(res, [...cols, ...extra]);
  return { version: await tbl.version(), schema: canonicalSchema(schema), rows };
}

async function evaluate(o) {
  const tbl = await open(o);
  if (o.version != null) await tbl.checkout(o.version);
  const proj = need(o, "projections");
  const sel = new Map([...proj.map(([out, expr]) => [out, expr]), ["__source_row_id", "_rowid"]]);
  if (sel.size !== proj.length + 1) throw new Error("driver: evaluate: duplicate or reserved output name");
  let q = tbl.query().select(sel);
  if (o.filter) q = q.where(o.filter);
  if (o.limit != null) q = q.limit(o.limit);
  const res = await q.toArrow();
  const rows = res.numRows === 0 ? [] : tableRows(res, [...sel.keys()]);
  // The result's types, when they have a canonical spelling (an empty
  // result may carry no schema at all).
  let schema = null;
  try {
    if (res.schema.fields.length === sel.size) schema = canonicalSchema(res.schema);
  } catch {
    schema = null;
  }
  return { version: await tbl.version(), rows, schema };
}

const commands = {
  ping: async () => "pong",
  connect: async (o) => { db = await lancedb.connect(need(o, "dir"), o.storage_options ? { storageOptions: o.storage_options } : {}); return null; },
  create_table: async (o) => {
    held.delete(need(o, "name"));
    const schema = schemaFromCanonical(need(o, "schema"));
    const data = tableFromRows(schema, o.rows ?? [], true);
    const storageOptions = { ...(o.stable_row_ids === false ? {} : STABLE), ...(o.storage_options ?? {}) };
    const tbl = (o.rows ?? []).length > 0
      ? await db.createTable(o.name, data, { mode: o.mode ?? "create", storageOptions })
      : await db.createEmptyTable(o.name, schema, { mode: o.mode ?? "create", storageOptions });
    return { version: await tbl.version() };
  },
  add: async (o) => {
    const tbl = await open(o);
    await tbl.add(await dataFor(tbl, need(o, "rows")), { mode: o.mode ?? "append" });
    return { version: await tbl.version() };
  },
  delete: async (o) => {
    const tbl = await open(o);
    await tbl.delete(need(o, "where"));
    return { version: await tbl.version() };
  },
  update: async (o) => {
    const tbl = await open(o);
    const r = await tbl.update({ ...(o.where ? { where: o.where } : {}), valuesSql: need(o, "values") });
    return { version: await tbl.version(), rows_updated: Number(r?.rowsUpdated ?? 0) };
  },
  merge_insert: async (o) => {
    const tbl = await open(o);
    let b = tbl.mergeInsert(need(o, "on"));
    if (o.matched_update) b = b.whenMatchedUpdateAll();
    if (o.not_matched_insert) b = b.whenNotMatchedInsertAll();
    if (o.not_matched_by_source_delete) b = b.whenNotMatchedBySourceDelete(o.by_source_where ? { where: o.by_source_where } : undefined);
    const r = await b.execute(await dataFor(tbl, need(o, "rows")));
    return {
      version: await tbl.version(),
      inserted: Number(r?.numInsertedRows ?? 0), updated: Number(r?.numUpdatedRows ?? 0), deleted: Number(r?.numDeletedRows ?? 0),
    };
  },
  optimize: async (o) => {
    const tbl = await open(o);
    const opts = o.cleanup_older_than_ms != null ? { cleanupOlderThan: new Date(Date.now() - o.cleanup_older_than_ms) } : {};
    await tbl.optimize(opts);
    return { version: await tbl.version() };
  },
  add_columns: async (o) => {
    const tbl = await open(o);
    await tbl.addColumns(need(o, "columns").map((c) => ({ name: c.name, valueSql: c.value_sql })));
    return { version: await tbl.version() };
  },
  drop_columns: async (o) => {
    const tbl = await open(o);
    await tbl.dropColumns(need(o, "columns"));
    return { version: await tbl.version() };
  },
  create_index: async (o) => {
    const tbl = await open(o);
    const types = { btree: () => lancedb.Index.btree(), bitmap: () => lancedb.Index.bitmap(), label_list: () => lancedb.Index.labelList() };
    const mk = types[o.index_type ?? "btree"];
    if (!mk) throw new Error(`driver: create_index: unknown index_type ${o.index_type}`);
    await tbl.createIndex(need(o, "column"), { config: mk() });
    return { version: await tbl.version() };
  },
  tag_create: async (o) => { await (await (await open(o)).tags()).create(need(o, "name"), need(o, "version")); return null; },
  list_indices: async (o) => (await (await open(o)).listIndices()).map((ix) => ({ name: ix.name, type: ix.indexType, columns: ix.columns })),
  restore: async (o) => {
    const tbl = await open(o);
    await tbl.checkout(need(o, "version"));
    await tbl.restore();
    return { version: await tbl.version() };
  },
  drop_table: async (o) => { held.delete(need(o, "name")); await db.dropTable(need(o, "name")); return null; },
  hold: async (o) => { held.set(need(o, "table"), await db.openTable(need(o, "table"))); return null; },
  release: async (o) => { held.delete(need(o, "table")); return null; },
  table_names: async () => db.tableNames(),
  version: async (o) => (await open(o)).version(),
  versions: async (o) => (await (await open(o)).listVersions()).map((v) => v.version),
  schema: async (o) => {
    const tbl = await open(o);
    if (o.version != null) await tbl.checkout(o.version);
    return canonicalSchema(await tbl.schema());
  },
  count: async (o) => {
    const tbl = await open(o);
    if (o.version != null) await tbl.checkout(o.version);
    return tbl.countRows(o.where ?? undefined);
  },
  read,
  evaluate,
  create_view: async (o) => {
    const opts = {};
    if (o.select != null) opts.select = o.select;
    if (o.where != null) opts.where = o.where;
    if (o.limit != null) opts.limit = o.limit;
    return definition(await db.createMaterializedView(need(o, "name"), need(o, "source"), opts));
  },
  view_definition: async (o) => definition(await db.openMaterializedView(need(o, "name"))),
  refresh: async (o) => {
    const view = await db.openMaterializedView(need(o, "name"));
    const opts = {};
    if (o.full != null) opts.full = o.full;
    if (o.source_version != null) opts.sourceVersion = o.source_version;
    return refreshResult(await view.refresh(opts));
  },
  list_views: async () => db.listMaterializedViews(),
  create_events: async (o) => createEvents(db, need(o, "name"), need(o, "rows"), o.batch ?? 100000, o.seed ?? 1),
  append_events: async (o) => {
    const tbl = await open(o);
    await tbl.add(eventsTable(need(o, "start"), need(o, "n"), o.seed ?? 1));
    return { version: await tbl.version() };
  },
  event_views: async () => EVENT_VIEWS,
  measure_refresh: async (o) => {
    const opts = {};
    if (o.full != null) opts.full = o.full;
    if (o.source_version != null) opts.sourceVersion = o.source_version;
    return measureRefresh(db, need(o, "name"), opts);
  },
  rss_reset: async () => { resetPeak(); return null; },
  rss: async () => vmStatus(),
  sleep: async (o) => { await new Promise((r) => setTimeout(r, need(o, "ms"))); return null; },
  exit: async () => null,
};

function answer(o) {
  process.stdout.write(toJSON(o, 0));
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (line.trim() === "") continue;
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    answer({ id: null, ok: false, ms: 0, error: `driver: bad request line: ${e.message}` });
    continue;
  }
  const fn = commands[req.cmd];
  const t0 = process.hrtime.bigint();
  try {
    if (!fn) throw new Error(`driver: unknown command ${JSON.stringify(req.cmd)}`);
    const result = await fn(req);
    answer({ id: req.id ?? null, ok: true, ms: Number(process.hrtime.bigint() - t0) / 1e6, result: result ?? null });
  } catch (e) {
    answer({ id: req.id ?? null, ok: false, ms: Number(process.hrtime.bigint() - t0) / 1e6, error: String(e?.message ?? e) });
  }
  if (req.cmd === "exit") break;
}
rl.close();
process.exit(0);
