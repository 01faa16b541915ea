// Writes to a LanceDB table while mvd's watcher runs, and prints the
// version after every operation, one JSON object per line:
//   {"op":"add","version":2}
// Usage: node --input-type=module -e "$(cat writer.mjs)" DIR NAME OPS
import * as lancedb from "@lancedb/lancedb";

const [dir, name, opsArg] = process.argv.slice(1).filter((a) => !a.startsWith("--"));
const ops = Number(opsArg);
const db = await lancedb.connect(dir);
const rows = (lo, n) => Array.from({ length: n }, (_, i) => ({ id: lo + i, val: (lo + i) * 1.5, name: `r${lo + i}` }));
const tbl = await db.createTable(name, rows(0, 100), {
  storageOptions: { new_table_enable_stable_row_ids: "true" },
});
const say = async (op) => console.log(JSON.stringify({ op, version: await tbl.version() }));
await say("create");
let next = 100;
for (let i = 0; i < ops; i++) {
  switch (i % 6) {
    case 0:
    case 1:
      await tbl.add(rows(next, 3));
      next += 3;
      await say("add");
      break;
    case 2:
      await tbl.update({ where: `id % 7 = ${i % 7}`, valuesSql: { val: "val + 1" } });
      await say("update");
      break;
    case 3:
      await tbl.delete(`id = ${i * 2}`);
      await say("delete");
      break;
    case 4:
      await tbl.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(rows(next - 2, 4));
      next += 2;
      await say("merge_insert");
      break;
    case 5:
      await tbl.optimize();
      await say("optimize");
      break;
  }
}
