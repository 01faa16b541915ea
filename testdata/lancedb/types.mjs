// types.mjs writes small typed LanceDB tables and LanceDB's own answers, for
// the differential tests of mvd's data file decoder (lance/datafile).
//
// Usage: node types.mjs OUT_DIR [VERSIONS] [SIZES]
//   VERSIONS: comma-separated file versions (default "2.0,2.1,2.2"; "legacy"
//             is Lance file format 0.1)
//   SIZES:    comma-separated row counts (default "10,3000")
//
// For every version V and size N it creates OUT_DIR/db/t_<V>_<N> (one
// fragment, no deletions) and OUT_DIR/t_<V>_<N>.json:
//   {"schema": [{"name", "type", "nullable", "children"}...], "rows": [{col: value}...]}
// where "type" is apache-arrow's type string and "children" describes the
// fields of lists, structs and fixed-size lists the same way.
// and one table OUT_DIR/db/added_<V> whose second fragment was written after
// a column was added (so the first fragment lacks it), with its JSON.
//
// Values follow the JSON conventions of datafile.AppendJSON: null; integers
// as exact JSON integers; floats as shortest round-trip numbers (NaN and
// infinities as strings); strings; binary as base64; dates "YYYY-MM-DD";
// timestamps RFC 3339 with the unit's fractional digits and "Z" only with a
// time zone; times "HH:MM:SS[.fff]"; durations as integers; decimals as exact
// strings; lists as arrays; structs as objects.
import * as fs from "node:fs";
import * as path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { createRequire } from "node:module";

// LanceDB loads the CommonJS build of apache-arrow; use the same copy.
const arrow = createRequire(import.meta.url)("apache-arrow");

// ---- building columns from exact storage values ----

function validity(vals) {
  const bm = new Uint8Array(((vals.length + 63) >> 6) << 3);
  let nulls = 0;
  vals.forEach((v, i) => {
    if (v === null) nulls++;
    else bm[i >> 3] |= 1 << (i & 7);
  });
  return { bm, nulls };
}

// prim builds a fixed-width column; vals holds storage values (BigInt for
// 64-bit types, arrays of words for wide ones) or null.
export function prim(type, vals, stride = 1) {
  const { bm, nulls } = validity(vals);
  const data = new type.ArrayType(vals.length * stride);
  vals.forEach((v, i) => {
    if (v === null) return;
    if (stride === 1) data[i] = v;
    else data.set(v, i * stride);
  });
  return arrow.makeData({ type, length: vals.length, nullCount: nulls, nullBitmap: bm, data });
}

export function boolCol(vals) {
  const { bm, nulls } = validity(vals);
  const data = new Uint8Array(bm.length);
  vals.forEach((v, i) => { if (v) data[i >> 3] |= 1 << (i & 7); });
  return arrow.makeData({ type: new arrow.Bool(), length: vals.length, nullCount: nulls, nullBitmap: bm, data });
}

const enc = new TextEncoder();

// varCol builds utf8/binary (and their large forms) from strings or bytes.
export function varCol(type, vals, large) {
  const { bm, nulls } = validity(vals);
  const parts = vals.map((v) => (v === null ? new Uint8Array(0) : typeof v === "string" ? enc.encode(v) : v));
  const total = parts.reduce((a, p) => a + p.length, 0);
  const data = new Uint8Array(total);
  const offs = large ? new BigInt64Array(vals.length + 1) : new Int32Array(vals.length + 1);
  let o = 0;
  parts.forEach((p, i) => {
    data.set(p, o);
    o += p.length;
    offs[i + 1] = large ? BigInt(o) : o;
  });
  return arrow.makeData({ type, length: vals.length, nullCount: nulls, nullBitmap: bm, valueOffsets: offs, data });
}

// listCol builds a list column from per-row child counts (null = null list).
export function listCol(itemField, counts, child) {
  const { bm, nulls } = validity(counts);
  const offs = new Int32Array(counts.length + 1);
  let o = 0;
  counts.forEach((c, i) => { o += c === null ? 0 : c; offs[i + 1] = o; });
  return arrow.makeData({ type: new arrow.List(itemField), length: counts.length, nullCount: nulls, nullBitmap: bm, valueOffsets: offs, child });
}

export function structCol(fields, valid, children) {
  const { bm, nulls } = validity(valid);
  return arrow.makeData({ type: new arrow.Struct(fields), length: valid.length, nullCount: nulls, nullBitmap: bm, children });
}

export function fslCol(itemField, dim, valid, child) {
  const { bm, nulls } = validity(valid);
  return arrow.makeData({ type: new arrow.FixedSizeList(dim, itemField), length: valid.length, nullCount: nulls, nullBitmap: bm, child });
}

// A deterministic PRNG so every run writes the same tables.
function rng(seed) {
  let s = BigInt(seed) | 1n;
  return () => {
    s ^= s << 13n; s &= 0xffffffffffffffffn;
    s ^= s >> 7n;
    s ^= s << 17n; s &= 0xffffffffffffffffn;
    return s;
  };
}

const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];

export function buildTable(n) {
  const r = rng(12345 + n);
  const num = (m) => Number(r() % BigInt(m));
  const nul = (i, k) => (i * 7 + k) % 11 === 0;
  const cols = [];
  const add = (name, data, nullable = true) => cols.push({ field: new arrow.Field(name, data.type, nullable), data });
  const gen = (f) => Array.from({ length: n }, (_, i) => f(i));

  add("id", prim(new arrow.Int64(), gen((i) => BigInt(i))), false);
  add("b", boolCol(gen((i) => (nul(i, 1) ? null : num(3) === 0))));
  add("i8", prim(new arrow.Int8(), gen((i) => (nul(i, 2) ? null : num(256) - 128))));
  add("i16", prim(new arrow.Int16(), gen((i) => (nul(i, 3) ? null : num(65536) - 32768))));
  add("i32", prim(new arrow.Int32(), gen((i) => (nul(i, 4) ? null : num(1000) - 500))));
  add("i32_nn", prim(new arrow.Int32(), gen((i) => i * 3 - 70)), false);
  add("i64", prim(new arrow.Int64(), gen((i) => (nul(i, 5) ? null : BigInt.asIntN(64, r())))));
  add("i64_small", prim(new arrow.Int64(), gen((i) => (nul(i, 6) ? null : BigInt(num(5000)) - 2500n))));
  add("u8", prim(new arrow.Uint8(), gen((i) => (nul(i, 7) ? null : num(256)))));
  add("u16", prim(new arrow.Uint16(), gen((i) => (nul(i, 8) ? null : num(65536)))));
  add("u32", prim(new arrow.Uint32(), gen((i) => (nul(i, 9) ? null : Number(r() & 0xffffffffn)))));
  add("u64", prim(new arrow.Uint64(), gen((i) => (nul(i, 10) ? null : r()))));
  add("f16", prim(new arrow.Float16(), gen((i) => (nul(i, 0) ? null : [0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x3555][i % 6]))));
  add("f32", prim(new arrow.Float32(), gen((i) => (nul(i, 1) ? null : [1.5, -0.25, 3.4e38, NaN, -Infinity, (i % 97) / 7][i % 6]))));
  add("f64", prim(new arrow.Float64(), gen((i) => (nul(i, 2) ? null : [Math.PI * i, -0, 1e-300, Infinity, 0.1, i / 3][i % 6]))));
  add("f64_nn", prim(new arrow.Float64(), gen((i) => i * 0.5)), false);
  add("s_dict", varCol(new arrow.Utf8(), gen((i) => (nul(i, 3) ? null : words[num(8)])), false));
  add("s_uniq", varCol(new arrow.Utf8(), gen((i) => (nul(i, 4) ? null : `user-${i}-${num(1000000)}é`)), false));
  add("s_long", varCol(new arrow.Utf8(), gen((i) => (nul(i, 5) ? null : `${words[i % 8]} `.repeat(30 + (i % 20)) + i)), false));
  add("s_empty", varCol(new arrow.Utf8(), gen((i) => (nul(i, 6) ? null : i % 3 === 0 ? "" : `x${i % 5}`)), false));
  add("ls", varCol(new arrow.LargeUtf8(), gen((i) => (nul(i, 7) ? null : `large ${i}`)), true));
  add("bin", varCol(new arrow.Binary(), gen((i) => (nul(i, 8) ? null : Uint8Array.from([i & 255, 0, 255, num(256)]))), false));
  add("lbin", varCol(new arrow.LargeBinary(), gen((i) => (nul(i, 9) ? null : Uint8Array.from({ length: i % 9 }, (_, k) => (k * 31 + i) & 255))), true));
  add("fsb", prim(new arrow.FixedSizeBinary(3), gen((i) => (nul(i, 10) ? null : Uint8Array.from([i & 255, (i >> 8) & 255, 7]))), 3));
  add("d32", prim(new arrow.DateDay(), gen((i) => (nul(i, 0) ? null : num(40000) - 10000))));
  add("d64", prim(new arrow.DateMillisecond(), gen((i) => (nul(i, 1) ? null : BigInt(num(40000) - 10000) * 86400000n))));
  for (const [unit, nm] of [[arrow.TimeUnit.SECOND, "s"], [arrow.TimeUnit.MILLISECOND, "ms"], [arrow.TimeUnit.MICROSECOND, "us"], [arrow.TimeUnit.NANOSECOND, "ns"]]) {
    add(`ts_${nm}`, prim(new arrow.Timestamp(unit), gen((i) => (nul(i, 2) ? null : BigInt(num(2000000000)) * 1000n + BigInt(num(1000))))));
    add(`tsz_${nm}`, prim(new arrow.Timestamp(unit, "UTC"), gen((i) => (nul(i, 3) ? null : BigInt(num(2000000000)) - 100000000n))));
    add(`tso_${nm}`, prim(new arrow.Timestamp(unit, "Asia/Kolkata"), gen((i) => (nul(i, 5) ? null : BigInt(num(1000000000))))));
    add(`dur_${nm}`, prim(new arrow.Duration(unit), gen((i) => (nul(i, 4) ? null : BigInt(num(2000000000)) - 1000000000n))));
  }
  add("t32s", prim(new arrow.TimeSecond(), gen((i) => (nul(i, 5) ? null : num(86400)))));
  add("t32ms", prim(new arrow.TimeMillisecond(), gen((i) => (nul(i, 6) ? null : num(86400000)))));
  add("t64us", prim(new arrow.TimeMicrosecond(), gen((i) => (nul(i, 7) ? null : BigInt(num(86400000)) * 1000n + BigInt(num(1000))))));
  add("t64ns", prim(new arrow.TimeNanosecond(), gen((i) => (nul(i, 8) ? null : BigInt(num(86400000)) * 1000000n + BigInt(num(1000000))))));
  add("dec", prim(new arrow.Decimal(4, 20, 128), gen((i) => {
    if (nul(i, 9)) return null;
    const v = BigInt.asUintN(128, (BigInt(num(2000000)) - 1000000n) * 123456789n);
    return Uint32Array.from([0, 1, 2, 3].map((k) => Number((v >> BigInt(32 * k)) & 0xffffffffn)));
  }), 4));
  add("const_i32", prim(new arrow.Int32(), gen(() => 7)));
  add("const_s", varCol(new arrow.Utf8(), gen(() => "same"), false));
  add("all_null", prim(new arrow.Int32(), gen(() => null)));
  add("runs", prim(new arrow.Int32(), gen((i) => Math.floor(i / 300))));

  // Nested all-null and constant pages: a list column of null lists, a
  // list column of empty lists, a struct whose child is all null, a struct
  // that is null everywhere, a constant list and a constant vector.
  {
    const f = new arrow.Field("item", new arrow.Int32(), true);
    add("l_null", listCol(f, gen(() => null), prim(new arrow.Int32(), [])));
    add("l_empty", listCol(f, gen(() => 0), prim(new arrow.Int32(), [])));
    add("l_const", listCol(f, gen(() => 2), prim(new arrow.Int32(), gen(() => [5, 6]).flat())));
    const fa = new arrow.Field("a", new arrow.Int32(), true);
    const fb = new arrow.Field("b", new arrow.Int32(), true);
    add("st_nullchild", structCol([fa, fb], gen(() => true), [prim(new arrow.Int32(), gen(() => null)), prim(new arrow.Int32(), gen((i) => i))]));
    add("st_allnull", structCol([fa, fb], gen(() => null), [prim(new arrow.Int32(), gen(() => null)), prim(new arrow.Int32(), gen(() => null))]));
    add("vec_const", fslCol(new arrow.Field("item", new arrow.Float32(), true), 4, gen(() => true), prim(new arrow.Float32(), gen(() => [1, 2, 3, 4]).flat())));
    add("s_null", varCol(new arrow.Utf8(), gen(() => null), false));
    add("s_const_null", varCol(new arrow.Utf8(), gen((i) => (i % 3 === 1 ? null : "same")), false));
    add("i_const_null", prim(new arrow.Int32(), gen((i) => (i % 3 === 1 ? null : 7))));
    add("l_const_null", listCol(f, gen((i) => (i % 3 === 1 ? null : 2)), prim(new arrow.Int32(), gen((i) => (i % 3 === 1 ? [] : [5, 6])).flat())));
    add("b_const", boolCol(gen(() => true)));
    // Structs equal in every row (constant pages of struct children in 2.2):
    // non-null, nested, a string child, and nullable with constant values.
    const all = gen(() => true);
    const fcity = new arrow.Field("city", new arrow.Utf8(), true);
    add("st_const", structCol([fa], all, [prim(new arrow.Int32(), gen(() => 7))]));
    const inner = structCol([fa], all, [prim(new arrow.Int32(), gen(() => 7))]);
    add("st_const_nested", structCol([new arrow.Field("s", inner.type, true)], all, [inner]));
    add("st_const_s", structCol([fcity], all, [varCol(new arrow.Utf8(), gen(() => "Paris"), false)]));
    add("st_const_null", structCol([fa, fcity], gen((i) => (i % 3 === 1 ? null : true)), [
      prim(new arrow.Int32(), gen((i) => (i % 3 === 1 ? null : 7))),
      varCol(new arrow.Utf8(), gen((i) => (i % 3 === 1 ? null : "Paris")), false),
    ]));
  }
  // list<int32> with null lists, empty lists and null items.
  {
    const counts = gen((i) => (nul(i, 10) ? null : i % 5 === 0 ? 0 : 1 + (i % 4)));
    const items = [];
    counts.forEach((c, i) => { for (let k = 0; k < (c ?? 0); k++) items.push((i + k) % 13 === 0 ? null : i * 10 + k); });
    const f = new arrow.Field("item", new arrow.Int32(), true);
    add("l_i32", listCol(f, counts, prim(new arrow.Int32(), items)));
  }
  // list<utf8>
  {
    const counts = gen((i) => (nul(i, 0) ? null : i % 6 === 0 ? 0 : 1 + (i % 3)));
    const items = [];
    counts.forEach((c, i) => { for (let k = 0; k < (c ?? 0); k++) items.push((i + k) % 9 === 0 ? null : words[(i + k) % 8]); });
    add("l_s", listCol(new arrow.Field("item", new arrow.Utf8(), true), counts, varCol(new arrow.Utf8(), items, false)));
  }
  // list<list<int64>>
  {
    const outer = gen((i) => (nul(i, 1) ? null : i % 4));
    const innerCounts = [];
    outer.forEach((c, i) => { for (let k = 0; k < (c ?? 0); k++) innerCounts.push((i + k) % 5 === 0 ? null : (i + k) % 3); });
    const items = [];
    innerCounts.forEach((c, j) => { for (let k = 0; k < (c ?? 0); k++) items.push(BigInt(j * 100 + k)); });
    const itemF = new arrow.Field("item", new arrow.Int64(), true);
    const inner = listCol(itemF, innerCounts, prim(new arrow.Int64(), items));
    add("ll", listCol(new arrow.Field("item", inner.type, true), outer, inner));
  }
  // list<struct<x:int32, y:utf8>>
  {
    const counts = gen((i) => (nul(i, 2) ? null : i % 3));
    const m = counts.reduce((a, c) => a + (c ?? 0), 0);
    const sv = Array.from({ length: m }, (_, j) => (j % 7 === 3 ? null : true));
    const fx = new arrow.Field("x", new arrow.Int32(), true);
    const fy = new arrow.Field("y", new arrow.Utf8(), true);
    const st = structCol([fx, fy], sv, [
      prim(new arrow.Int32(), Array.from({ length: m }, (_, j) => (j % 5 === 1 ? null : j))),
      varCol(new arrow.Utf8(), Array.from({ length: m }, (_, j) => (j % 4 === 2 ? null : `y${j}`)), false),
    ]);
    add("l_st", listCol(new arrow.Field("item", st.type, true), counts, st));
  }
  // struct<a:int32, b:utf8, c:struct<d:float64>> with struct-level nulls
  // (2.0 cannot store struct nulls, so the caller passes structNulls=false).
  add("st", (() => {
    const valid = gen((i) => (nul(i, 3) ? null : true));
    const inner = structCol([new arrow.Field("d", new arrow.Float64(), true)], gen((i) => (i % 6 === 1 ? null : true)), [
      prim(new arrow.Float64(), gen((i) => (i % 4 === 0 ? null : i / 4))),
    ]);
    return structCol([
      new arrow.Field("a", new arrow.Int32(), true),
      new arrow.Field("b", new arrow.Utf8(), true),
      new arrow.Field("c", inner.type, true),
    ], valid, [
      prim(new arrow.Int32(), gen((i) => (i % 5 === 0 ? null : i))),
      varCol(new arrow.Utf8(), gen((i) => (i % 3 === 0 ? null : words[i % 8])), false),
      inner,
    ]);
  })());
  // fixed_size_list<float32, 64> with null rows and null items.
  {
    const dim = 64;
    const valid = gen((i) => (nul(i, 4) ? null : true));
    const items = Array.from({ length: n * dim }, (_, j) => (j % 97 === 5 ? null : (j % 1000) / 8 - 60));
    add("vec", fslCol(new arrow.Field("item", new arrow.Float32(), true), dim, valid, prim(new arrow.Float32(), items)));
  }
  // Small vectors with null items (mini-block candidates), and 1536-dim
  // vectors in the 10-row tables only (their JSON is large).
  {
    const valid = gen((i) => (nul(i, 6) ? null : true));
    const items = Array.from({ length: n * 4 }, (_, j) => (j % 7 === 2 ? null : j / 4));
    add("vec4", fslCol(new arrow.Field("item", new arrow.Float32(), true), 4, valid, prim(new arrow.Float32(), items)));
    const ints = Array.from({ length: n * 3 }, (_, j) => (j % 5 === 1 ? null : j));
    add("fsl_i16", fslCol(new arrow.Field("item", new arrow.Int16(), true), 3, valid, prim(new arrow.Int16(), ints)));
    if (n === 10) {
      const big = Array.from({ length: n * 1536 }, (_, j) => (j % 1001 === 3 ? null : ((j * 7) % 2048) / 64));
      add("vec1536", fslCol(new arrow.Field("item", new arrow.Float32(), true), 1536, valid, prim(new arrow.Float32(), big)));
    }
  }
  // Repeated wide values (full-zip with rep levels): lists of long strings
  // and lists of vectors; and a struct holding a list and a vector.
  {
    const counts = gen((i) => (nul(i, 7) ? null : i % 4));
    const m = counts.reduce((a, c) => a + (c ?? 0), 0);
    const longs = Array.from({ length: m }, (_, j) => (j % 6 === 4 ? null : `${words[j % 8]}-`.repeat(40 + (j % 9)) + j));
    add("l_long", listCol(new arrow.Field("item", new arrow.Utf8(), true), counts, varCol(new arrow.Utf8(), longs, false)));
    const vf = new arrow.Field("item", new arrow.Float32(), true);
    const vecs = fslCol(vf, 64, Array.from({ length: m }, (_, j) => (j % 5 === 2 ? null : true)),
      prim(new arrow.Float32(), Array.from({ length: m * 64 }, (_, j) => (j % 89 === 1 ? null : (j % 512) / 8))));
    add("l_vec", listCol(new arrow.Field("item", vecs.type, true), counts, vecs));
    const lc = gen((i) => (i % 7 === 3 ? null : i % 3));
    const lm = lc.reduce((a, c) => a + (c ?? 0), 0);
    const inner = listCol(new arrow.Field("item", new arrow.Int32(), true), lc, prim(new arrow.Int32(), Array.from({ length: lm }, (_, j) => j)));
    const sv = fslCol(vf, 4, gen((i) => (i % 5 === 1 ? null : true)), prim(new arrow.Float32(), gen((i) => [i, -i, i / 2, null]).flat()));
    add("st_lv", structCol([new arrow.Field("l", inner.type, true), new arrow.Field("v", sv.type, true)], gen((i) => (nul(i, 8) ? null : true)), [inner, sv]));
  }
  // dictionary<int32, utf8>
  {
    const dictVals = arrow.vectorFromArray(["red", "green", "blue"], new arrow.Utf8());
    const type = new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32());
    const idx = gen((i) => (nul(i, 5) ? null : i % 3));
    const { bm, nulls } = validity(idx);
    const data = Int32Array.from(idx.map((v) => v ?? 0));
    add("dict", arrow.makeData({ type, length: n, nullCount: nulls, nullBitmap: bm, data, dictionary: dictVals }));
  }
  return cols;
}

function toTable(cols, skip) {
  const keep = cols.filter((c) => !skip(c.field.name));
  const schema = new arrow.Schema(keep.map((c) => c.field));
  const n = keep[0].data.length;
  return new arrow.Table(schema, arrow.makeData({
    type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children: keep.map((c) => c.data),
  }));
}

// ---- rendering LanceDB's answers ----

function b64(bytes) { return Buffer.from(bytes).toString("base64"); }

function shortest32(x) {
  for (let p = 1; p <= 9; p++) {
    const s = x.toPrecision(p);
    if (Math.fround(Number(s)) === x) return Number(s);
  }
  return x;
}

// shortest16 is the shortest decimal that rounds back to the same float16.
function shortest16(x) {
  for (let p = 1; p <= 5; p++) {
    const s = x.toPrecision(p);
    if (arrow.util.float64ToUint16(Number(s)) === arrow.util.float64ToUint16(x)) return Number(s);
  }
  return x;
}

function floatJSON(x, bits) {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  if (Object.is(x, -0)) return { raw: "-0" };
  if (bits === 16) return shortest16(x);
  return bits === 64 ? x : shortest32(x);
}

function half(bits) {
  const s = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const f = bits & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

const pad = (v, w) => String(v).padStart(w, "0");

function civil(days) {
  const d = new Date(Number(days) * 86400000);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
}

const unitDigits = { 0: 0, 1: 3, 2: 6, 3: 9 };
const unitPer = { 0: 1n, 1: 1000n, 2: 1000000n, 3: 1000000000n };

function fracStr(frac, digits) { return digits ? "." + pad(frac, digits) : ""; }

function tsStr(v, unit, tz) {
  const per = unitPer[unit];
  let sec = v / per;
  let frac = v % per;
  if (frac < 0n) { frac += per; sec -= 1n; }
  let days = sec / 86400n;
  let rem = sec % 86400n;
  if (rem < 0n) { rem += 86400n; days -= 1n; }
  const hh = rem / 3600n, mm = (rem % 3600n) / 60n, ss = rem % 60n;
  return `${civil(days)}T${pad(hh, 2)}:${pad(mm, 2)}:${pad(ss, 2)}${fracStr(frac, unitDigits[unit])}`;
}

// Zones the fixtures use, with their (constant since 1945) offsets; Lance
// cannot store "+hh:mm" zones, so a named zone stands in for an offset.
const zoneOffsets = { "Asia/Kolkata": "+05:30" };

// tsJSON renders a timestamp in its type's zone: UTC as "Z", other zones
// as local time with their offset, no zone without suffix.
function tsJSON(v, unit, tz) {
  if (!tz) return tsStr(v, unit);
  if (tz === "UTC") return tsStr(v, unit) + "Z";
  const m = /^([+-])(\d\d):(\d\d)$/.exec(zoneOffsets[tz] || tz);
  if (!m) throw new Error(`cannot render time zone ${tz}`);
  const off = BigInt((m[1] === "-" ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60));
  return tsStr(v + off * unitPer[unit], unit) + (zoneOffsets[tz] || tz);
}

function timeStr(v, unit) {
  const per = unitPer[unit];
  const sec = v / per, frac = v % per;
  return `${pad(sec / 3600n, 2)}:${pad((sec % 3600n) / 60n, 2)}:${pad(sec % 60n, 2)}${fracStr(frac, unitDigits[unit])}`;
}

function decStr(words, scale) {
  let v = 0n;
  for (let k = 3; k >= 0; k--) v = (v << 32n) | BigInt(words[k]);
  v = BigInt.asIntN(128, v);
  const neg = v < 0n;
  let s = (neg ? -v : v).toString();
  if (scale > 0) {
    s = s.padStart(scale + 1, "0");
    s = s.slice(0, s.length - scale) + "." + s.slice(s.length - scale);
  }
  return (neg ? "-" : "") + s;
}

const T = arrow.Type;

// value renders row i of Data d (i excludes d.offset).
function value(d, i) {
  if (!d.getValid(i)) return null;
  const t = d.type;
  const j = d.offset + i;
  switch (t.typeId) {
    case T.Bool: return ((d.values[j >> 3] >> (j & 7)) & 1) === 1;
    case T.Int: return t.bitWidth === 64 ? { raw: d.values[j].toString() } : d.values[j];
    case T.Float:
      if (t.precision === 0) return floatJSON(half(d.values[j]), 16);
      return floatJSON(d.values[j], t.precision === 1 ? 32 : 64);
    case T.Utf8: case T.LargeUtf8: case T.Binary: case T.LargeBinary: {
      const a = Number(d.valueOffsets[j]), b = Number(d.valueOffsets[j + 1]);
      const bytes = d.values.subarray(a, b);
      return t.typeId === T.Utf8 || t.typeId === T.LargeUtf8 ? new TextDecoder().decode(bytes) : b64(bytes);
    }
    case T.FixedSizeBinary: return b64(d.values.subarray(j * t.byteWidth, (j + 1) * t.byteWidth));
    case T.Date: return t.unit === arrow.DateUnit.DAY ? civil(d.values[j]) : civil(BigInt(d.values[j]) / 86400000n);
    case T.Timestamp: return tsJSON(BigInt(d.values[j]), t.unit, t.timezone);
    case T.Time: return timeStr(BigInt(d.values[j]), t.unit);
    case T.Duration: return { raw: BigInt(d.values[j]).toString() };
    case T.Decimal: return decStr(d.values.subarray(j * 4, j * 4 + 4), t.scale);
    case T.List: {
      const a = d.valueOffsets[j], b = d.valueOffsets[j + 1];
      const out = [];
      for (let k = a; k < b; k++) out.push(value(d.children[0], k));
      return out;
    }
    case T.FixedSizeList: {
      const out = [];
      for (let k = j * t.listSize; k < (j + 1) * t.listSize; k++) out.push(value(d.children[0], k));
      return out;
    }
    case T.Struct: {
      const o = {};
      t.children.forEach((f, k) => { o[f.name] = value(d.children[k], j); });
      return o;
    }
    case T.Dictionary: return value(d.dictionary.data[0], d.values[j]);
    default: throw new Error(`cannot render ${t}`);
  }
}

// stringify is JSON.stringify that keeps {raw} numbers verbatim.
function stringify(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "[" + v.map(stringify).join(",") + "]";
  if (typeof v === "object") {
    if ("raw" in v && Object.keys(v).length === 1) return v.raw;
    return "{" + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ":" + stringify(x)).join(",") + "}";
  }
  return JSON.stringify(v);
}

async function answer(tbl, file) {
  const res = await tbl.query().toArrow();
  // Each field with its children (list items, struct fields, FSL items).
  const describe = (f) => {
    const d = { name: f.name, type: String(f.type), nullable: f.nullable };
    if (f.type.children && f.type.children.length) d.children = f.type.children.map(describe);
    return d;
  };
  const schema = res.schema.fields.map(describe);
  const rows = [];
  for (const batch of res.batches) {
    for (let i = 0; i < batch.numRows; i++) {
      const o = {};
      batch.schema.fields.forEach((f, k) => { o[f.name] = value(batch.data.children[k], i); });
      rows.push(o);
    }
  }
  fs.writeFileSync(file, `{"schema":${JSON.stringify(schema)},"rows":[\n${rows.map(stringify).join(",\n")}\n]}\n`);
}

async function main() {
  const [outDir, versArg, sizesArg] = process.argv.slice(2);
  if (!outDir) {
    console.error("usage: node types.mjs OUT_DIR [VERSIONS] [SIZES]");
    process.exit(2);
  }
  const versions = (versArg || "2.0,2.1,2.2").split(",");
  const sizes = (sizesArg || "10,3000").split(",").map(Number);
  fs.mkdirSync(outDir, { recursive: true });
  const db = await lancedb.connect(path.join(outDir, "db"));
  for (const v of versions) {
    const opts = { storageOptions: { new_table_data_storage_version: v } };
    for (const n of sizes) {
      const name = `t_${v}_${n}`;
      // 2.0 refuses struct-level nulls and list<struct>; leave them out there.
      const skip = (c) => v === "2.0" && ["st", "l_st", "st_allnull", "st_lv", "st_const_null"].includes(c);
      const tbl = await db.createTable(name, toTable(buildTable(n), skip), opts);
      await answer(tbl, path.join(outDir, `${name}.json`));
    }
    if (v === "legacy") {
      // Nullability changed after the file was written: LanceDB reads a
      // legacy file's empty strings as null by the table's nullability (a
      // column with empty strings cannot be made non-nullable: they are
      // nulls to LanceDB).
      const n = 20;
      const strs = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? "" : `s${i}`));
      const cols = [
        { field: new arrow.Field("id", new arrow.Int64(), false), data: prim(new arrow.Int64(), strs.map((_, i) => BigInt(i))) },
        { field: new arrow.Field("to_nullable", new arrow.Utf8(), false), data: varCol(new arrow.Utf8(), strs, false) },
        { field: new arrow.Field("kept", new arrow.Utf8(), true), data: varCol(new arrow.Utf8(), strs, false) },
      ];
      const tbl = await db.createTable("altered_legacy", toTable(cols, () => false), opts);
      await tbl.alterColumns([{ path: "to_nullable", nullable: true }]);
      await answer(tbl, path.join(outDir, "altered_legacy.json"));
      // Legacy tables cannot add a column without writing it (below).
      continue;
    }
    // A column added after the first fragment was written.
    const name = `added_${v}`;
    const base = buildTable(20);
    const tbl = await db.createTable(name, toTable(base, (c) => !["id", "i32"].includes(c)), opts);
    await tbl.addColumns([new arrow.Field("later", new arrow.Utf8(), true)]);
    const more = buildTable(20).filter((c) => ["id", "i32", "s_dict"].includes(c.field.name));
    more[2] = { field: new arrow.Field("later", new arrow.Utf8(), true), data: more[2].data };
    await tbl.add(toTable(more, () => false));
    await answer(tbl, path.join(outDir, `${name}.json`));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
