// structs.mjs writes tables whose struct columns hold the same value in
// every row of a page (so LanceDB writes constant pages: issue 8 item 1), in
// every shape: non-null and nullable structs, null structs, null children,
// nested structs, structs of lists, vectors and booleans, lists of structs.
// Each table gets a history of small commits, since a one-row update
// writes a one-row fragment where every column is constant.
//
// Usage: node structs.mjs OUT_DIR [VERSIONS] [ROWS]
//   VERSIONS: comma-separated file versions (default "2.1,2.2")
//   ROWS:     rows of the first commit (default 1000)
//
// For every file version V it writes the table OUT_DIR/structs_V.lance
// (stable row ids) with versions:
//   1 create ROWS rows      2 update one row (id 3)     3 append two rows
//   4 delete one row (id 5) 5 update one row (id 7)
// and OUT_DIR/structs_V.json: {"versions": [{"version", "schema", "rows"}]}
// with LanceDB's own rows of every version, as query.mjs prints them.
import fs from "node:fs";
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { arrow } from "./lib/arrow.mjs";
import { canonicalSchema } from "./lib/schema.mjs";
import { tableRows } from "./lib/values.mjs";
import { toJSON } from "./lib/json.mjs";
import { prim, boolCol, varCol, listCol, structCol, fslCol } from "./types.mjs";

const field = (name, type, nullable = true) => new arrow.Field(name, type, nullable);

// columns returns the columns of rows [start, start+n): id varies, every
// other column is constant apart from its nulls.
function columns(start, n) {
  const gen = (f) => Array.from({ length: n }, (_, k) => f(start + k));
  const i32 = (f) => prim(new arrow.Int32(), gen(f));
  const utf8 = (f) => varCol(new arrow.Utf8(), gen(f), false);
  const cols = [];
  const add = (name, data, nullable = true) => cols.push({ field: field(name, data.type, nullable), data });
  const all = gen(() => true);

  add("id", prim(new arrow.Int64(), gen((i) => BigInt(i))), false);
  add("st_a", structCol([field("a", new arrow.Int32())], all, [i32(() => 7)]));
  add("st_nn", structCol([field("a", new arrow.Int32(), false)], all, [i32(() => 7)]), false);
  add("st_city", structCol([field("city", new arrow.Utf8())], all, [utf8(() => "Paris")]));
  const inner = structCol([field("a", new arrow.Int32())], all, [i32(() => 7)]);
  add("st_nested", structCol([field("s", inner.type)], all, [inner]));
  add("st_null", structCol([field("a", new arrow.Int32()), field("b", new arrow.Utf8())],
    gen((i) => (i % 3 === 1 ? null : true)), [i32((i) => (i % 3 === 1 ? null : 7)), utf8((i) => (i % 3 === 1 ? null : "x"))]));
  add("st_childnull", structCol([field("a", new arrow.Int32()), field("b", new arrow.Utf8())],
    all, [i32((i) => (i % 4 === 2 ? null : 7)), utf8(() => "x")]));
  {
    const d = prim(new arrow.Float64(), gen((i) => (i % 5 === 0 || i % 7 === 0 ? null : 2.5)));
    const inn = structCol([field("d", new arrow.Float64())], gen((i) => (i % 5 === 0 || i % 7 === 0 ? null : true)), [d]);
    add("st_nested_null", structCol([field("inner", inn.type)], gen((i) => (i % 5 === 0 ? null : true)), [inn]));
  }
  add("st_mixed", structCol([field("a", new arrow.Int32()), field("b", new arrow.Int32())], all, [i32(() => 7), i32((i) => i)]));
  {
    const x = prim(new arrow.Int32(), Array.from({ length: 2 * n }, () => 1));
    const st = structCol([field("x", new arrow.Int32())], Array.from({ length: 2 * n }, () => true), [x]);
    add("l_st", listCol(field("item", st.type), gen(() => 2), st));
  }
  {
    const l = listCol(field("item", new arrow.Int32()), gen(() => 2), prim(new arrow.Int32(), gen(() => [5, 6]).flat()));
    add("st_l", structCol([field("l", l.type)], all, [l]));
  }
  {
    const v = fslCol(field("item", new arrow.Float32()), 4, all, prim(new arrow.Float32(), gen(() => [1, 2, 3, 4]).flat()));
    add("st_v", structCol([field("v", v.type)], all, [v]));
  }
  add("st_b", structCol([field("b", new arrow.Bool())], all, [boolCol(gen(() => true))]));
  add("st_allnull", structCol([field("a", new arrow.Int32())], gen(() => null), [i32(() => null)]));
  const schema = new arrow.Schema(cols.map((c) => c.field));
  return new arrow.Table(schema, arrow.makeData({
    type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children: cols.map((c) => c.data),
  }));
}

async function rowsAt(tbl, version) {
  await tbl.checkout(version);
  const res = await tbl.query().toArrow();
  return { version, schema: canonicalSchema(res.schema), rows: tableRows(res, res.schema.fields.map((f) => f.name)) };
}

const [outDir, versArg, rowsArg] = process.argv.slice(2);
if (!outDir) {
  console.error("usage: node structs.mjs OUT_DIR [VERSIONS] [ROWS]");
  process.exit(2);
}
const n = Number(rowsArg || 1000);
fs.mkdirSync(outDir, { recursive: true });
const db = await lancedb.connect(outDir);
for (const v of (versArg || "2.1,2.2").split(",")) {
  const name = `structs_${v}`;
  const tbl = await db.createTable(name, columns(0, n), {
    storageOptions: { new_table_data_storage_version: v, new_table_enable_stable_row_ids: "true" },
  });
  await tbl.update({ where: "id = 3", valuesSql: { id: "1003" } });
  await tbl.add(columns(n, 2));
  await tbl.delete("id = 5");
  await tbl.update({ where: "id = 7", valuesSql: { id: "1007" } });
  const versions = [];
  for (const { version } of await tbl.listVersions()) versions.push(await rowsAt(tbl, version));
  fs.writeFileSync(path.join(outDir, `${name}.json`), toJSON({ versions }, 2, ["rows"]));
}
