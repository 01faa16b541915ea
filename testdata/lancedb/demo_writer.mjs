// LanceDB's side of `make run` (scripts/run-demo.sh).
//
//   node demo_writer.mjs setup --dir DIR [--rows 1000]
//       Creates table `events` (the benchmark workload of lib/events.mjs,
//       stable row ids) and, with LanceDB's own createMaterializedView, the
//       view `purchases` (id, user, amount_cents where kind = 'purchase' AND
//       amount > 10). Prints what it made, one line each.
//
//   node demo_writer.mjs write --dir DIR [--commits 0] [--gap-ms 1000]
//       Commits small batches to `events` as a live application would: mostly
//       appends of 1–5 events, now and then an update or a delete of one
//       event. One line per commit, flushed:
//         [lancedb] events v12: appended 3 events (ids 1000–1002)
//       --commits 0 writes until SIGINT/SIGTERM; otherwise it stops after N.
import * as lancedb from "@lancedb/lancedb";
import { createEvents, eventsTable } from "./lib/events.mjs";

const sleep = (t) => new Promise((r) => setTimeout(r, t));
const say = (s) => process.stdout.write(`[lancedb]   ${s}\n`);

function parseArgs(argv) {
  const o = { cmd: argv[0], rows: 1000, commits: 0, gap: 1000 };
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i], v = () => argv[++i];
    if (a === "--dir") o.dir = v();
    else if (a === "--rows") o.rows = Number(v());
    else if (a === "--commits") o.commits = Number(v());
    else if (a === "--gap-ms") o.gap = Number(v());
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.dir) throw new Error("--dir is required");
  for (const k of ["rows", "commits", "gap"]) {
    if (!Number.isSafeInteger(o[k]) || o[k] < 0) throw new Error(`--${k} must be a non-negative integer`);
  }
  return o;
}

async function setup(o) {
  const db = await lancedb.connect(o.dir);
  const info = await createEvents(db, "events", o.rows, 500, 1);
  say(`created table events: ${o.rows} events, version ${info.version} (stable row ids)`);
  await db.createMaterializedView("purchases", "events", {
    select: ["id", "user", ["amount_cents", "amount * 100"]],
    where: "kind = 'purchase' AND amount > 10",
  });
  say("created view purchases = SELECT id, user, amount * 100 AS amount_cents FROM events WHERE kind = 'purchase' AND amount > 10 (not refreshed yet)");
}

// A deterministic pseudo-random sequence, so every demo run looks alike.
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

async function write(o) {
  const db = await lancedb.connect(o.dir);
  const tbl = await db.openTable("events");
  let next = await tbl.countRows();
  let stop = false;
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => { stop = true; });
  const rand = rng(42);
  const start = performance.now();
  for (let i = 0; !stop && (o.commits === 0 || i < o.commits); i++) {
    // Fixed rate: a slow commit does not shift the rest.
    const due = start + i * o.gap - performance.now();
    if (due > 0) await sleep(due);
    if (stop) break;
    const r = rand();
    let what;
    if (r < 0.15 && next > 10) {
      const id = Math.floor(rand() * next);
      await tbl.update({ where: `id = ${id}`, valuesSql: { amount: "amount + 50" } });
      what = `updated event ${id} (amount + 50)`;
    } else if (r < 0.25 && next > 10) {
      const id = Math.floor(rand() * next);
      await tbl.delete(`id = ${id}`);
      what = `deleted event ${id}`;
    } else {
      const n = 1 + Math.floor(rand() * 5);
      await tbl.add(eventsTable(next, n, 1));
      what = n === 1 ? `appended 1 event (id ${next})` : `appended ${n} events (ids ${next}-${next + n - 1})`;
      next += n;
    }
    say(`events v${await tbl.version()}: ${what}`);
  }
  say("writer stopped");
}

const o = parseArgs(process.argv.slice(2));
if (o.cmd === "setup") await setup(o);
else if (o.cmd === "write") await write(o);
else throw new Error("usage: node demo_writer.mjs setup|write --dir DIR …");
