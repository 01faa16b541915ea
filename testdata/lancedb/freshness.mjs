// LanceDB's side of issue 11's freshness benchmark.
//
//   node freshness.mjs writer --dir DIR [--table events] [--create ROWS]
//        [--commits 200] [--gap-ms 20] [--wait]
//       Single-row commits by LanceDB on DIR/TABLE (created first with ROWS
//       events and stable row ids when --create is given). With --wait it
//       prints {"ready":true,"version":V} and waits for a line on stdin
//       before the first commit. Prints one JSON line per commit, flushed:
//       {"seq":i,"id":ID,"version":V,"commit_ms":ms,"returned_us":epoch µs}
//       and finally {"done":true,"commits":N,"commit_ms":{p50,p99,max}}.
//       --gap-ms 0 commits as fast as LanceDB can (the burst).
//
//   node freshness.mjs lancedb --dir DIR [--rows 10000] [--commits 200]
//        [--gap-ms 50] --poll-ms MS
//       The baseline: a source and a view (id, kind, amount over every row),
//       a child process refreshing the view with LanceDB's own refresh every
//       MS ms (0 = a tight loop), and single-row commits from this process.
//       Latency of a commit = from its return to the end of the first
//       refresh that reflects it. Prints one JSON object:
//       {mode, poll_ms, commits, latency_ms: {p50,p99,mean,max}, commit_ms:
//        {p50,p99,max}, refreshes, no_op_refreshes, poller_cpu_ms,
//        poller_wall_ms, poller_cpu_cores, samples_ms: [...]}
//
//   node freshness.mjs watch --dir DIR --table T [--poll-ms 1]
//       A LanceDB reader of T (a view mvd maintains): prints {"ready":true,
//       "version":V,"rows":N}, then one line per new version it sees
//       {"version","rows","seen_us"} (checking every MS ms; 0 = a tight
//       loop), until stdin closes; then {"polls","cpu_ms","wall_ms"}. The
//       time a commit's row became readable in LanceDB is the seen_us of the
//       first version whose row count covers it.
//
//   node freshness.mjs poll --dir DIR --view V --poll-ms MS
//       (the child) prints {"ready":true} once warm, then refreshes until
//       stdin closes; prints a line per refresh
//       that was not a no-op {"done_us","source_version","mode"} and at the
//       end {"refreshes","no_op","cpu_user_ms","cpu_sys_ms","wall_ms"}.
import { spawn } from "node:child_process";
import fs from "node:fs";
import readline from "node:readline";
import * as lancedb from "@lancedb/lancedb";
import { createEvents, eventsTable, ms } from "./lib/events.mjs";

const nowUS = () => Math.round((performance.timeOrigin + performance.now()) * 1000);
const sleep = (t) => new Promise((r) => setTimeout(r, t));
const line = (o) => process.stdout.write(JSON.stringify(o) + "\n");

function parseArgs(argv) {
  const o = { table: "events", commits: 200, gap: null, poll: null, rows: 10000, create: null, wait: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], v = () => argv[++i];
    if (a === "--dir") o.dir = v();
    else if (a === "--table") o.table = v();
    else if (a === "--view") o.view = v();
    else if (a === "--commits") o.commits = Number(v());
    else if (a === "--gap-ms") o.gap = Number(v());
    else if (a === "--poll-ms") o.poll = Number(v());
    else if (a === "--rows") o.rows = Number(v());
    else if (a === "--create") o.create = Number(v());
    else if (a === "--wait") o.wait = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.dir) throw new Error("--dir is required");
  for (const k of ["commits", "gap", "poll", "rows", "create"]) {
    if (o[k] !== null && (!Number.isSafeInteger(o[k]) || o[k] < 0)) throw new Error(`--${k} must be a non-negative integer`);
  }
  return o;
}

function pct(xs, p) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

const stats = (xs) => ({ p50: pct(xs, 50), p99: pct(xs, 99), max: xs.length ? Math.max(...xs) : null });

/** Single-row commits; calls onCommit for each. Returns the commit times. */
async function commits(tbl, first, n, gap, onCommit) {
  const times = [];
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    if (gap > 0) {
      // Fixed rate, so a slow commit does not shift the rest.
      const due = start + i * gap - performance.now();
      if (due > 0) await sleep(due);
    }
    const data = eventsTable(first + i, 1, 1);
    const t0 = process.hrtime.bigint();
    await tbl.add(data);
    const c = { seq: i, id: first + i, version: await tbl.version(), commit_ms: ms(t0), returned_us: nowUS() };
    times.push(c.commit_ms);
    onCommit(c);
  }
  return times;
}

async function writer(o) {
  const db = await lancedb.connect(o.dir);
  if (o.create !== null) await createEvents(db, o.table, o.create, 100000, 1);
  const tbl = await db.openTable(o.table);
  const first = await tbl.countRows() + 1000000000;
  if (o.wait) {
    line({ ready: true, version: await tbl.version() });
    const rl = readline.createInterface({ input: process.stdin });
    await new Promise((resolve) => rl.once("line", resolve));
    rl.close();
  }
  const times = await commits(tbl, first, o.commits, o.gap ?? 20, line);
  line({ done: true, commits: o.commits, commit_ms: stats(times) });
}

async function poll(o) {
  if (!o.view || o.poll === null) throw new Error("poll needs --view and --poll-ms");
  const db = await lancedb.connect(o.dir);
  const view = await db.openMaterializedView(o.view);
  let stop = false;
  process.stdin.on("end", () => { stop = true; });
  process.stdin.resume();
  await view.refresh(); // warm, and the view is current before the first commit
  line({ ready: true });
  const cpu0 = process.cpuUsage(), t0 = process.hrtime.bigint(), start = performance.now();
  let n = 0, noop = 0;
  while (!stop) {
    const r = await view.refresh();
    n++;
    if (r.mode === "no_op") noop++;
    else line({ done_us: nowUS(), source_version: r.sourceVersion, mode: r.mode });
    if (o.poll > 0) {
      const due = start + Math.ceil((performance.now() - start + 1e-9) / o.poll) * o.poll - performance.now();
      await sleep(due);
    } else {
      // Let the stdin "end" event through without slowing the loop.
      await new Promise((r) => setImmediate(r));
    }
  }
  const cpu = process.cpuUsage(cpu0);
  line({ refreshes: n, no_op: noop, cpu_user_ms: cpu.user / 1000, cpu_sys_ms: cpu.system / 1000, wall_ms: ms(t0) });
}

async function watch(o) {
  const db = await lancedb.connect(o.dir);
  const tbl = await db.openTable(o.table);
  let version = await tbl.version();
  line({ ready: true, version, rows: await tbl.countRows() });
  let stop = false;
  process.stdin.on("end", () => { stop = true; });
  process.stdin.resume();
  const cpu0 = process.cpuUsage(), t0 = process.hrtime.bigint();
  const gap = o.poll ?? 1;
  let polls = 0;
  while (!stop) {
    await tbl.checkoutLatest();
    polls++;
    const v = await tbl.version();
    if (v !== version) {
      version = v;
      line({ version: v, rows: await tbl.countRows(), seen_us: nowUS() });
    }
    await (gap > 0 ? sleep(gap) : new Promise((r) => setImmediate(r)));
  }
  const cpu = process.cpuUsage(cpu0);
  line({ polls, cpu_ms: (cpu.user + cpu.system) / 1000, wall_ms: ms(t0) });
}

async function baseline(o) {
  if (o.poll === null) throw new Error("lancedb needs --poll-ms");
  fs.mkdirSync(o.dir, { recursive: true });
  const db = await lancedb.connect(o.dir);
  await createEvents(db, o.table, o.rows, 100000, 1);
  if ((await db.tableNames()).includes("fresh")) await db.dropTable("fresh");
  const view = await db.createMaterializedView("fresh", o.table, { select: ["id", "kind", "amount"] });
  await view.refresh();
  const tbl = await db.openTable(o.table);

  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, "poll", "--dir", o.dir, "--view", "fresh", "--poll-ms", String(o.poll)], { stdio: ["pipe", "pipe", "inherit"] });
  const refreshes = [];
  let final = null, markReady;
  const ready = new Promise((resolve) => { markReady = resolve; });
  const rl = readline.createInterface({ input: child.stdout });
  rl.on("line", (l) => {
    const x = JSON.parse(l);
    if (x.ready) markReady();
    else if ("refreshes" in x) final = x;
    else refreshes.push(x);
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  await Promise.race([ready, exited]);

  const made = [];
  const times = await commits(tbl, o.rows, o.commits, o.gap ?? 50, (c) => made.push(c));
  const last = made.at(-1)?.version ?? 0;
  const deadline = performance.now() + 10 * Math.max(o.poll, 1000);
  while (!refreshes.some((r) => r.source_version >= last) && performance.now() < deadline) await sleep(5);
  child.stdin.end();
  await exited;
  rl.close();
  if (!final) throw new Error("poller ended without its summary");

  const samples = [];
  for (const c of made) {
    const r = refreshes.find((x) => x.source_version >= c.version);
    if (r) samples.push(Math.max(0, (r.done_us - c.returned_us) / 1000));
  }
  const mean = samples.reduce((a, b) => a + b, 0) / (samples.length || 1);
  const cpu = final.cpu_user_ms + final.cpu_sys_ms;
  process.stdout.write(JSON.stringify({
    mode: o.poll > 0 ? `poll_${o.poll}ms` : "tight_loop", poll_ms: o.poll, commits: made.length, seen: samples.length,
    latency_ms: { p50: pct(samples, 50), p99: pct(samples, 99), mean, max: samples.length ? Math.max(...samples) : null },
    commit_ms: stats(times), refreshes: final.refreshes, no_op_refreshes: final.no_op,
    poller_cpu_ms: cpu, poller_wall_ms: final.wall_ms, poller_cpu_cores: cpu / final.wall_ms, samples_ms: samples,
  }) + "\n");
}

const [cmd, ...rest] = process.argv.slice(2);
const run = { writer, poll, watch, lancedb: baseline }[cmd];
if (!run) {
  process.stderr.write("usage: node freshness.mjs writer|lancedb|watch|poll --dir DIR ...\n");
  process.exit(2);
}
run(parseArgs(rest)).catch((e) => {
  process.stderr.write(`freshness: ${e.stack ?? e}\n`);
  process.exit(1);
});
