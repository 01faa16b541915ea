// The peer workload of issue 10's benchmarks: the `events` source (id int64,
// user utf8, kind utf8 of 8 values, amount float64 0–99.99, ts
// timestamp[us], tags list<utf8> of 0–3 items), written by LanceDB in
// batches with stable row ids, and its three views. Rows are a pure
// function of the id and a seed, built straight into Arrow buffers so that
// 5M rows take seconds.
import fs from "node:fs";
import { arrow } from "./arrow.mjs";
import { mix32 } from "./data.mjs";

/** The eight kinds; V1 reads 'purchase', V3 'refund'. */
export const KINDS = ["purchase", "refund", "view", "click", "signup", "login", "share", "search"];
const TAGS = ["new", "vip", "mobile", "web", "promo", "eu", "us"];
const TS_BASE_US = 1767225600000000n; // 2026-01-01T00:00:00Z

export const EVENTS_SCHEMA = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("user", new arrow.Utf8(), true),
  new arrow.Field("kind", new arrow.Utf8(), true),
  new arrow.Field("amount", new arrow.Float64(), true),
  new arrow.Field("ts", new arrow.TimestampMicrosecond(), true),
  new arrow.Field("tags", new arrow.List(new arrow.Field("item", new arrow.Utf8(), true)), true),
]);

/** The views of the benchmark, as createMaterializedView options. */
export const EVENT_VIEWS = {
  V1: { select: ["id", "user", ["amount_cents", "amount * 100"]], where: "kind = 'purchase' AND amount > 10" },
  V2: { select: ["id", "kind", "amount"] },
  V3: { select: ["id", "user", "amount"], where: "kind = 'refund' AND amount > 50", limit: 1000 },
};

/** The event with this id under seed, as plain values. */
export function eventFor(id, seed) {
  const h = mix32(id, seed), g = mix32(id, seed + 1000);
  const ntags = g % 4;
  const tags = [];
  for (let k = 0; k < ntags; k++) tags.push(TAGS[(g >>> (4 + 3 * k)) % TAGS.length]);
  return {
    id,
    user: `u${h % 100000}`,
    kind: KINDS[(h >>> 17) % KINDS.length],
    amount: (g >>> 8) % 10000 / 100,
    ts: TS_BASE_US + BigInt(id) * 1000n + BigInt(h % 1000),
    tags,
  };
}

const enc = new TextEncoder();

function strings(values) {
  const parts = values.map((s) => enc.encode(s));
  const offsets = new Int32Array(values.length + 1);
  let total = 0;
  parts.forEach((p, i) => { total += p.length; offsets[i + 1] = total; });
  const bytes = new Uint8Array(total);
  parts.forEach((p, i) => bytes.set(p, offsets[i]));
  return { offsets, bytes };
}

/** A RecordBatch of events for ids [start, start+n). */
export function eventsBatch(start, n, seed) {
  const ids = new BigInt64Array(n), amounts = new Float64Array(n), ts = new BigInt64Array(n);
  const users = [], kinds = [], tagItems = [];
  const tagOffsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const e = eventFor(start + i, seed);
    ids[i] = BigInt(e.id);
    users.push(e.user);
    kinds.push(e.kind);
    amounts[i] = e.amount;
    ts[i] = e.ts;
    tagItems.push(...e.tags);
    tagOffsets[i + 1] = tagItems.length;
  }
  const [fId, fUser, fKind, fAmount, fTs, fTags] = EVENTS_SCHEMA.fields;
  const u = strings(users), k = strings(kinds), t = strings(tagItems);
  const none = { nullCount: 0, nullBitmap: new Uint8Array(0) };
  const children = [
    arrow.makeData({ type: fId.type, length: n, ...none, data: ids }),
    arrow.makeData({ type: fUser.type, length: n, ...none, valueOffsets: u.offsets, data: u.bytes }),
    arrow.makeData({ type: fKind.type, length: n, ...none, valueOffsets: k.offsets, data: k.bytes }),
    arrow.makeData({ type: fAmount.type, length: n, ...none, data: amounts }),
    arrow.makeData({ type: fTs.type, length: n, ...none, data: ts }),
    arrow.makeData({
      type: fTags.type, length: n, ...none, valueOffsets: tagOffsets,
      child: arrow.makeData({ type: fTags.type.children[0].type, length: tagItems.length, ...none, valueOffsets: t.offsets, data: t.bytes }),
    }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(EVENTS_SCHEMA.fields), length: n, nullCount: 0, children });
  return new arrow.RecordBatch(EVENTS_SCHEMA, struct);
}

/** An Arrow Table of events [start, start+n), in batches of at most `batch`. */
export function eventsTable(start, n, seed, batch = 100000) {
  const batches = [];
  for (let at = 0; at < n; at += batch) batches.push(eventsBatch(start + at, Math.min(batch, n - at), seed));
  return new arrow.Table(EVENTS_SCHEMA, batches);
}

/**
 * Creates table `name` of `rows` events with stable row ids, one LanceDB
 * commit per batch of `batch` rows, and returns timings.
 */
export async function createEvents(db, name, rows, batch, seed, progress = () => {}) {
  const opts = { storageOptions: { new_table_enable_stable_row_ids: "true" }, mode: "overwrite" };
  const t0 = process.hrtime.bigint();
  let tbl = null;
  for (let at = 0; at < rows; at += batch) {
    const data = eventsTable(at, Math.min(batch, rows - at), seed, batch);
    if (tbl === null) tbl = await db.createTable(name, data, opts);
    else await tbl.add(data);
    progress(Math.min(rows, at + batch), rows);
  }
  if (tbl === null) tbl = await db.createEmptyTable(name, EVENTS_SCHEMA, opts);
  return { rows, batch, commits: Math.ceil(rows / batch) || 1, write_ms: ms(t0), version: await tbl.version() };
}

/** Milliseconds since an hrtime.bigint() reading (to the microsecond). */
export function ms(t0) {
  return Math.round(Number(process.hrtime.bigint() - t0) / 1e3) / 1e3;
}

/** This process's RSS and peak RSS (VmHWM) in kB. */
export function vmStatus() {
  const s = fs.readFileSync("/proc/self/status", "utf8");
  const kb = (k) => Number((new RegExp(`${k}:\\s+(\\d+) kB`).exec(s) ?? [0, 0])[1]);
  return { rss_kb: kb("VmRSS"), peak_kb: kb("VmHWM") };
}

/** Resets the peak RSS counter (Linux clear_refs), so vmStatus().peak_kb measures from here. */
export function resetPeak() {
  fs.writeFileSync("/proc/self/clear_refs", "5");
}

/**
 * Refreshes view `name` with LanceDB and measures it: wall time, peak RSS
 * of this process during the refresh (and its RSS before), and how many
 * view versions the refresh committed.
 */
export async function measureRefresh(db, name, options = {}) {
  const view = await db.openMaterializedView(name);
  const before = (await view.table().listVersions()).length;
  globalThis.gc?.();
  const rss0 = vmStatus().rss_kb;
  resetPeak();
  const t0 = process.hrtime.bigint();
  const r = await view.refresh(options);
  const wall = ms(t0);
  const peak = vmStatus().peak_kb;
  const after = (await view.table().listVersions()).length;
  return {
    mode: r.mode, rows_written: r.rowsWritten, source_version: r.sourceVersion, version: r.version,
    ms: wall, rss_before_kb: rss0, peak_rss_kb: peak, view_versions: after - before,
  };
}

/**
 * A deterministic stream of distinct ids in [0, n) with id % 2 == parity:
 * updates draw even ids and deletes odd ones, so an update never misses a
 * row a delete removed.
 */
export function idStream(n, seed, parity) {
  // mulberry32: a full-period 32-bit generator.
  let state = mix32(seed, 17 + parity);
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const used = new Set();
  const half = Math.floor((n - parity + 1) / 2);
  return () => {
    if (used.size >= half) throw new Error("idStream: exhausted");
    for (;;) {
      const id = Math.floor(next() * half) * 2 + parity;
      if (!used.has(id)) { used.add(id); return id; }
    }
  };
}
