// mvd's writer interop harness: opens a table mvd wrote and reports what
// LanceDB 0.39 reads, or runs LanceDB operations on it.
//
//   node interop.mjs read <table.lance> [version]
//       → JSON {version, versions, num_rows, schema, schema_metadata, rows, data}
//         (rows/data as in the fixture answers files; see testdata/fixtures/README.md)
//   node interop.mjs slice <table.lance> <offset> <limit>
//       → JSON {num_rows, data}: the latest version's rows offset..offset+limit
//         in scan order (data as in "read")
//   node interop.mjs reads <table.lance> <v1,v2,...>
//       → JSON array of the above, one per version, from one process
//   node interop.mjs ops <table.lance> '<json array of ops>'
//       → JSON {version, results, retries}; ops, run in order on one handle,
//         each retried on Lance's "Retryable commit conflict":
//         {"op":"add","start":S,"n":N}            fixture rows (id,name,val) for ids S..S+N-1
//         {"op":"add","ids":[..],"variant":V}     fixture rows for explicit ids
//         {"op":"add_rows","rows":[{..},..]}      plain objects, converted by LanceDB
//         {"op":"update","where":"..","values":{"col":"sql expr"}}
//         {"op":"delete","where":".."}
//         {"op":"merge_insert","on":"id","ids":[..],"variant":V}  upsert fixture rows
//         {"op":"optimize"}                        compaction (and cleanup of nothing)
//         {"op":"count"}                           countRows() into results
//         {"op":"create_index","column":"id"}      default (btree) scalar index
//         {"op":"indices"}                         listIndices() names and columns into results
//         {"op":"query","where":".."}              rows matching into results (as ids)
//         {"op":"select","columns":{"alias":"sql expr",..}}  every row of the SQL
//                                                  projection, in scan order, into results
//                                                  (values as in "read"; checks types
//                                                  apache-arrow cannot decode, via casts)
//         {"op":"wait"}                            print "interop: waiting" on stderr and
//                                                  block until a line arrives on stdin
//                                                  (the handle stays at its version)
//         {"op":"overwrite","start":S,"n":N}       replace every row by fixture rows
//                                                  (variant 2) for ids S..S+N-1
//         {"op":"restore","version":V}             restore version V as the latest
//   node interop.mjs pairs '<json array of cases>'
//       → JSON array, one {outcome, error, retried, version, rows} per case
//         {"table":T, "winner":op?, "loser":op?}: a handle on T is opened (the
//         loser's, left at the version it read), the winner runs through a
//         second handle, then the loser runs on the first, once: outcome "ok",
//         "retryable" (Lance's "Retryable commit conflict") or "conflict"
//         (any other commit conflict), error its message. After a retryable
//         conflict the loser runs again on the latest version, as an
//         application would (retried: "ok" or its error). rows: the latest
//         version's "id:name" strings, sorted. Without ops, only the rows.
//   node interop.mjs create_dict <table.lance> <data storage version>
//       → JSON {version}: a new table of 10 rows of id (int64), color
//         (dictionary<int32, utf8>), tag (dictionary<uint8, binary>), sd
//         (struct<c: dictionary<int32, utf8>, k: int32>, no struct nulls, which
//         2.0 cannot store) and ld (list<dictionary<int32, utf8>>), with nulls,
//         as LanceDB writes dictionary-typed columns
//   node interop.mjs bench <dir> <rows> <small commits>
//       → JSON {write_ms, data_bytes, small_commit_ms: [..]}: LanceDB's time to create a
//         table of <rows> fixture rows, then each of <small commits> 10-row adds
//
// Errors print the message on stderr and exit 1. A stale handle is part of
// the test: "ops" opens the table once and never calls checkoutLatest, so a
// commit made meanwhile by mvd is rebased over by LanceDB itself.
import fs from "node:fs";
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { arrow } from "./lib/arrow.mjs";
import { readVersion } from "./lib/answers.mjs";
import { makeIdsTable, makeRangeTable } from "./lib/data.mjs";
import { toJSON } from "./lib/json.mjs";
import { tableRows } from "./lib/values.mjs";

async function openTable(tablePath) {
  const abs = path.resolve(tablePath);
  const db = await lancedb.connect(path.dirname(abs));
  return db.openTable(path.basename(abs).replace(/\.lance$/, ""));
}

async function read(tablePath, versionArg) {
  const tbl = await openTable(tablePath);
  const versions = (await tbl.listVersions()).map((v) => v.version);
  const version = versionArg ? Number(versionArg) : await tbl.version();
  const { entry } = await readVersion(tbl, version, { withData: true });
  const schema = await tbl.schema();
  const md = {};
  for (const [k, v] of schema.metadata) md[k] = v;
  return { ...entry, versions, schema_metadata: md };
}

// waitLine tells the test it is waiting, then blocks until stdin has a line.
function waitLine() {
  process.stderr.write("interop: waiting\n");
  return new Promise((resolve) => {
    const onData = (chunk) => {
      if (String(chunk).includes("\n")) {
        process.stdin.off("data", onData);
        process.stdin.pause();
        resolve();
      }
    };
    process.stdin.on("data", onData);
    process.stdin.resume();
  });
}

// Lance reports a "Retryable commit conflict" when a concurrent commit (for
// example one of mvd's) touched what this one did; nothing was committed,
// so the operation is run again on the latest version, as an application
// would.
async function retrying(tbl, fn, stats) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= 20 || !String(e.message).includes("Retryable commit conflict")) throw e;
      stats.retries++;
      await tbl.checkoutLatest();
    }
  }
}

async function slice(tablePath, offset, limit) {
  const tbl = await openTable(tablePath);
  const cols = (await tbl.schema()).fields.map((f) => f.name);
  const res = await tbl.query().select(cols).offset(offset).limit(limit).toArrow();
  return { num_rows: await tbl.countRows(), data: tableRows(res, cols) };
}

async function ops(tablePath, list) {
  const tbl = await openTable(tablePath);
  const results = [];
  const stats = { retries: 0 };
  for (const o of list) await retrying(tbl, () => runOp(tbl, o, results), stats);
  return { version: await tbl.version(), results, retries: stats.retries };
}

async function runOp(tbl, o, results) {
  {
    switch (o.op) {
      case "add":
        await tbl.add(o.ids ? makeIdsTable(o.ids, o.variant ?? 0) : makeRangeTable(o.start, o.n, o.variant ?? 0));
        break;
      case "add_rows":
        await tbl.add(o.rows);
        break;
      case "update":
        await tbl.update({ where: o.where, valuesSql: o.values });
        break;
      case "delete":
        await tbl.delete(o.where);
        break;
      case "merge_insert":
        await tbl.mergeInsert(o.on).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(makeIdsTable(o.ids, o.variant ?? 1));
        break;
      case "optimize":
        await tbl.optimize();
        break;
      case "overwrite":
        await tbl.add(makeRangeTable(o.start, o.n, 2), { mode: "overwrite" });
        break;
      case "restore":
        await tbl.checkout(o.version);
        await tbl.restore();
        break;
      case "count":
        results.push(await tbl.countRows());
        break;
      case "wait":
        await waitLine();
        break;
      case "create_index":
        await tbl.createIndex(o.column);
        break;
      case "indices":
        results.push((await tbl.listIndices()).map((ix) => ({ name: ix.name, type: ix.indexType, columns: ix.columns })));
        break;
      case "query": {
        const res = await tbl.query().where(o.where).select(["id"]).toArrow();
        const ids = [];
        const col = res.numRows > 0 ? res.getChild("id") : null; // an empty result may carry no columns
        if (col) for (const d of col.data) for (let i = 0; i < d.length; i++) ids.push(BigInt(d.values[i]));
        results.push(ids);
        break;
      }
      case "select": {
        const res = await tbl.query().select(o.columns).toArrow();
        results.push(tableRows(res, Object.keys(o.columns)));
        break;
      }
      default:
        throw new Error(`interop: unknown op ${JSON.stringify(o)}`);
    }
  }
}

// conflictKind classifies a failed commit as Lance reports it, or rethrows
// an error that is not a commit conflict.
function conflictKind(e) {
  const msg = String(e.message);
  if (msg.includes("Retryable commit conflict")) return "retryable";
  if (/conflict/i.test(msg)) return "conflict";
  throw e;
}

async function latestRows(tablePath) {
  const tbl = await openTable(tablePath);
  const res = await tbl.query().select(["id", "name"]).toArrow();
  const rows = [];
  const ids = res.numRows > 0 ? res.getChild("id") : null;
  const names = res.numRows > 0 ? res.getChild("name") : null;
  for (let i = 0; i < res.numRows; i++) rows.push(`${ids.get(i)}:${names.get(i) ?? "null"}`);
  rows.sort();
  return { version: await tbl.version(), rows };
}

async function pairs(cases) {
  const out = [];
  for (const c of cases) {
    const r = { outcome: "", error: "", retried: "" };
    if (c.loser) {
      const stale = await openTable(c.table);
      await stale.version();
      if (c.winner) await runOp(await openTable(c.table), c.winner, []);
      try {
        await runOp(stale, c.loser, []);
        r.outcome = "ok";
      } catch (e) {
        r.outcome = conflictKind(e);
        r.error = String(e.message);
      }
      if (r.outcome === "retryable") {
        await stale.checkoutLatest();
        try {
          await runOp(stale, c.loser, []);
          r.retried = "ok";
        } catch (e) {
          r.retried = String(e.message);
        }
      }
    } else if (c.winner) {
      await runOp(await openTable(c.table), c.winner, []);
    }
    out.push({ ...r, ...(await latestRows(c.table)) });
  }
  return out;
}

async function createDict(tablePath, version) {
  const abs = path.resolve(tablePath);
  const db = await lancedb.connect(path.dirname(abs));
  const n = 10;
  const ids = [], colors = [], tags = [], sd = [], ld = [];
  for (let i = 0; i < n; i++) {
    ids.push(BigInt(i));
    colors.push(i % 4 === 3 ? null : ["red", "green", "blue"][i % 3]);
    tags.push(i % 5 === 1 ? null : Uint8Array.of(i % 2, 255));
    sd.push({ c: i % 3 === 1 ? null : ["x", "y"][i % 2], k: i });
    ld.push(i % 5 === 2 ? null : Array.from({ length: i % 3 }, (_, j) => (j === 1 ? null : ["p", "q", "r"][(i + j) % 3])));
  }
  const strDict = () => new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32());
  const tbl = new arrow.Table({
    id: arrow.vectorFromArray(ids, new arrow.Int64()),
    color: arrow.vectorFromArray(colors, strDict()),
    tag: arrow.vectorFromArray(tags, new arrow.Dictionary(new arrow.Binary(), new arrow.Uint8())),
    sd: arrow.vectorFromArray(sd, new arrow.Struct([new arrow.Field("c", strDict(), true), new arrow.Field("k", new arrow.Int32(), true)])),
    ld: arrow.vectorFromArray(ld, new arrow.List(new arrow.Field("item", strDict(), true))),
  });
  const name = path.basename(abs).replace(/\.lance$/, "");
  const t = await db.createTable(name, tbl, { storageOptions: { new_table_data_storage_version: version } });
  return { version: await t.version() };
}

async function bench(dir, rows, small) {
  const db = await lancedb.connect(dir);
  const data = makeRangeTable(0, rows);
  const opts = { storageOptions: { new_table_enable_stable_row_ids: "true" } };
  let t0 = process.hrtime.bigint();
  const tbl = await db.createTable("bench", data, opts);
  const writeMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const dataDir = path.join(dir, "bench.lance", "data");
  let dataBytes = 0;
  for (const f of fs.readdirSync(dataDir)) dataBytes += fs.statSync(path.join(dataDir, f)).size;
  const smallMs = [];
  for (let i = 0; i < small; i++) {
    const batch = makeRangeTable(rows + 10 * i, 10);
    t0 = process.hrtime.bigint();
    await tbl.add(batch);
    smallMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { write_ms: writeMs, data_bytes: dataBytes, small_commit_ms: smallMs };
}

async function main() {
  const [cmd, tablePath, arg] = process.argv.slice(2);
  let out;
  if (cmd === "read") out = await read(tablePath, arg);
  else if (cmd === "pairs") out = await pairs(JSON.parse(tablePath));
  else if (cmd === "slice") out = await slice(tablePath, Number(arg), Number(process.argv[5]));
  else if (cmd === "reads") {
    out = [];
    for (const v of arg.split(",")) out.push(await read(tablePath, v));
  } else if (cmd === "ops") out = await ops(tablePath, JSON.parse(arg));
  else if (cmd === "create_dict") out = await createDict(tablePath, arg);
  else if (cmd === "bench") out = await bench(tablePath, Number(arg), Number(process.argv[5] ?? 20));
  else throw new Error("usage: interop.mjs read <table> [version] | ops <table> '<json>'");
  process.stdout.write(toJSON(out, 2, ["data"]));
}

main().catch((e) => {
  process.stderr.write(`interop: ${e.stack ?? e}\n`);
  process.exit(1);
});
