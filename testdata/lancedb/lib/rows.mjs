// Builds Arrow tables from JSON rows, exactly: the inverse of values.mjs.
// Go sends int64/uint64 values as decimal strings (JSON numbers above 2^53
// would be rounded by JSON.parse), timestamps as RFC 3339 text or integers
// in the column's unit, dates as YYYY-MM-DD, binary as base64, floats as
// numbers or "NaN"/"Infinity"/"-Infinity". The buffers are built by hand
// because apache-arrow's builders round 64-bit timestamps through doubles.
import { arrow } from "./arrow.mjs";

const T = arrow.Type;
const utf8 = new TextEncoder();
const UNIT_PER_SEC = [1n, 1000n, 1000000n, 1000000000n];
const UNIT = { s: arrow.TimeUnit.SECOND, ms: arrow.TimeUnit.MILLISECOND, us: arrow.TimeUnit.MICROSECOND, ns: arrow.TimeUnit.NANOSECOND };

/** An apache-arrow Schema from the canonical schema form of schema.mjs. */
export function schemaFromCanonical(s) {
  const md = new Map(Object.entries(s.metadata ?? {}));
  return new arrow.Schema(s.fields.map(fieldFromCanonical), md);
}

/** An apache-arrow Field from a canonical field {name, type, nullable, children, metadata}. */
export function fieldFromCanonical(f) {
  const md = new Map(Object.entries(f.metadata ?? {}));
  return new arrow.Field(f.name, typeFromCanonical(f.type, f.children ?? []), f.nullable ?? true, md);
}

function typeFromCanonical(t, children) {
  const simple = {
    null: () => new arrow.Null(), bool: () => new arrow.Bool(),
    int8: () => new arrow.Int8(), int16: () => new arrow.Int16(), int32: () => new arrow.Int32(), int64: () => new arrow.Int64(),
    uint8: () => new arrow.Uint8(), uint16: () => new arrow.Uint16(), uint32: () => new arrow.Uint32(), uint64: () => new arrow.Uint64(),
    float16: () => new arrow.Float16(), float32: () => new arrow.Float32(), float64: () => new arrow.Float64(),
    utf8: () => new arrow.Utf8(), binary: () => new arrow.Binary(),
    date32: () => new arrow.DateDay(),
  };
  if (simple[t]) return simple[t]();
  let m;
  if ((m = /^timestamp\[(s|ms|us|ns)(?:, tz=(.+))?\]$/.exec(t))) return new arrow.Timestamp(UNIT[m[1]], m[2] ?? null);
  if (t === "list") {
    if (children.length !== 1) throw new Error("rows: list needs one child field");
    return new arrow.List(fieldFromCanonical(children[0]));
  }
  if ((m = /^fixed_size_list\[(\d+)\]$/.exec(t))) {
    if (children.length !== 1) throw new Error("rows: fixed_size_list needs one child field");
    return new arrow.FixedSizeList(Number(m[1]), fieldFromCanonical(children[0]));
  }
  if (t === "struct") return new arrow.Struct(children.map(fieldFromCanonical));
  throw new Error(`rows: type ${t} is not supported as input`);
}

/**
 * An Arrow Table of `schema` holding `rows` (plain objects). A key missing
 * from a row is null; a key the schema lacks is an error (it is a typo in a
 * test, not data to drop). Schema-level metadata is attached only when
 * `withMetadata` (table creation), not to rows added to an existing table.
 */
export function tableFromRows(schema, rows, withMetadata = false) {
  const names = new Set(schema.fields.map((f) => f.name));
  for (const r of rows) {
    for (const k of Object.keys(r)) if (!names.has(k)) throw new Error(`rows: no column ${JSON.stringify(k)} in the table schema`);
  }
  const plain = withMetadata ? schema : new arrow.Schema(schema.fields);
  const children = schema.fields.map((f) => build(f, rows.map((r) => (r[f.name] === undefined ? null : r[f.name]))));
  const data = arrow.makeData({ type: new arrow.Struct(plain.fields), length: rows.length, nullCount: 0, children });
  return new arrow.Table(plain, [new arrow.RecordBatch(plain, data)]);
}

function validity(field, values) {
  const n = values.length;
  const bits = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (values[i] === null) nulls++;
    else bits[i >> 3] |= 1 << (i & 7);
  }
  if (nulls > 0 && !field.nullable) throw new Error(`rows: null in non-nullable column ${field.name}`);
  return { nullCount: nulls, nullBitmap: nulls > 0 ? bits : new Uint8Array(0) };
}

function build(field, values) {
  const t = field.type, n = values.length;
  if (t.typeId === T.Null) return arrow.makeData({ type: t, length: n, nullCount: n });
  const v = validity(field, values);
  const base = { type: t, length: n, ...v };
  switch (t.typeId) {
    case T.Bool: {
      const bits = new Uint8Array((n + 7) >> 3);
      values.forEach((x, i) => { if (x !== null && want(field, x, "boolean")) bits[i >> 3] |= 1 << (i & 7); });
      return arrow.makeData({ ...base, data: bits });
    }
    case T.Int: {
      const Arr = { 8: [Int8Array, Uint8Array], 16: [Int16Array, Uint16Array], 32: [Int32Array, Uint32Array], 64: [BigInt64Array, BigUint64Array] }[t.bitWidth][t.isSigned ? 0 : 1];
      const a = new Arr(n);
      values.forEach((x, i) => { if (x !== null) a[i] = t.bitWidth === 64 ? bigint(field, x, t.isSigned) : smallInt(field, x, t); });
      return arrow.makeData({ ...base, data: a });
    }
    case T.Float: {
      if (t.precision === arrow.Precision.HALF) {
        const a = new Uint16Array(n);
        values.forEach((x, i) => { if (x !== null) a[i] = arrow.util.float64ToUint16(float(field, x)); });
        return arrow.makeData({ ...base, data: a });
      }
      const a = t.precision === arrow.Precision.SINGLE ? new Float32Array(n) : new Float64Array(n);
      values.forEach((x, i) => { if (x !== null) a[i] = float(field, x); });
      return arrow.makeData({ ...base, data: a });
    }
    case T.Utf8: case T.Binary: {
      const parts = values.map((x) => (x === null ? new Uint8Array(0)
        : t.typeId === T.Utf8 ? utf8.encode(want(field, x, "string"))
          : new Uint8Array(Buffer.from(want(field, x, "string"), "base64"))));
      const offsets = new Int32Array(n + 1);
      let total = 0;
      parts.forEach((p, i) => { total += p.length; offsets[i + 1] = total; });
      const bytes = new Uint8Array(total);
      parts.forEach((p, i) => bytes.set(p, offsets[i]));
      return arrow.makeData({ ...base, valueOffsets: offsets, data: bytes });
    }
    case T.Date: {
      if (t.unit !== arrow.DateUnit.DAY) throw new Error(`rows: ${field.name}: only date32 is supported`);
      const a = new Int32Array(n);
      values.forEach((x, i) => { if (x !== null) a[i] = dateDays(field, x); });
      return arrow.makeData({ ...base, data: a });
    }
    case T.Timestamp: {
      const a = new BigInt64Array(n);
      values.forEach((x, i) => { if (x !== null) a[i] = timestamp(field, x, t.unit); });
      return arrow.makeData({ ...base, data: a });
    }
    case T.List: {
      const offsets = new Int32Array(n + 1);
      const flat = [];
      values.forEach((x, i) => {
        if (x !== null) flat.push(...want(field, x, "array"));
        offsets[i + 1] = flat.length;
      });
      return arrow.makeData({ ...base, valueOffsets: offsets, child: build(t.children[0], flat) });
    }
    case T.FixedSizeList: {
      const flat = [];
      for (const x of values) {
        if (x === null) { for (let k = 0; k < t.listSize; k++) flat.push(null); continue; }
        const a = want(field, x, "array");
        if (a.length !== t.listSize) throw new Error(`rows: ${field.name}: ${a.length} items, want ${t.listSize}`);
        flat.push(...a);
      }
      // Slots of null lists hold nulls, so a non-nullable item field cannot
      // take them: relax it for the child data only.
      const cf = t.children[0];
      const child = build(v.nullCount > 0 ? new arrow.Field(cf.name, cf.type, true, cf.metadata) : cf, flat);
      return arrow.makeData({ ...base, child });
    }
    case T.Struct: {
      const children = t.children.map((cf) => {
        const vs = values.map((x) => (x === null ? null : want(field, x, "object")[cf.name] ?? null));
        return build(v.nullCount > 0 ? new arrow.Field(cf.name, cf.type, true, cf.metadata) : cf, vs);
      });
      return arrow.makeData({ ...base, children });
    }
    default:
      throw new Error(`rows: ${field.name}: type ${t} is not supported as input`);
  }
}

function want(field, x, kind) {
  const ok = kind === "array" ? Array.isArray(x) : kind === "object" ? typeof x === "object" && !Array.isArray(x) : typeof x === kind;
  if (!ok) throw new Error(`rows: ${field.name}: ${JSON.stringify(x)} is not a ${kind}`);
  return x;
}

function bigint(field, x, signed) {
  let b;
  if (typeof x === "bigint") b = x;
  else if (typeof x === "string" && /^-?\d+$/.test(x)) b = BigInt(x);
  else if (typeof x === "number" && Number.isSafeInteger(x)) b = BigInt(x);
  else throw new Error(`rows: ${field.name}: ${JSON.stringify(x)} is not an exact integer (send 64-bit values as decimal strings)`);
  const lo = signed ? -(1n << 63n) : 0n, hi = signed ? (1n << 63n) - 1n : (1n << 64n) - 1n;
  if (b < lo || b > hi) throw new Error(`rows: ${field.name}: ${b} out of range`);
  return b;
}

function smallInt(field, x, t) {
  const b = bigint(field, x, t.isSigned);
  const lo = t.isSigned ? -(2 ** (t.bitWidth - 1)) : 0, hi = t.isSigned ? 2 ** (t.bitWidth - 1) - 1 : 2 ** t.bitWidth - 1;
  const v = Number(b);
  if (v < lo || v > hi) throw new Error(`rows: ${field.name}: ${v} out of range for ${t}`);
  return v;
}

function float(field, x) {
  if (typeof x === "number") return x;
  // Go sends integral JSON numbers as decimal text (it cannot tell the
  // column type); a decimal string reads as the nearest double, as JSON does.
  if (typeof x === "string" && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(x)) return Number(x);
  if (x === "NaN") return NaN;
  if (x === "Infinity") return Infinity;
  if (x === "-Infinity") return -Infinity;
  throw new Error(`rows: ${field.name}: ${JSON.stringify(x)} is not a float`);
}

function dateDays(field, x) {
  if (typeof x === "number" && Number.isSafeInteger(x)) return x;
  const m = typeof x === "string" && /^(\d{4})-(\d{2})-(\d{2})$/.exec(x);
  if (!m) throw new Error(`rows: ${field.name}: ${JSON.stringify(x)} is not a date (YYYY-MM-DD)`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 86400000;
}

/** A timestamp value in `unit` from an integer (in that unit) or RFC 3339 text. */
export function timestamp(field, x, unit) {
  if (typeof x !== "string" || !x.includes("-")) return bigint(field, x, true);
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})?$/.exec(x);
  if (!m) throw new Error(`rows: ${field.name}: ${JSON.stringify(x)} is not an RFC 3339 timestamp`);
  const ms = Date.parse(`${m[1]}T${m[2]}${m[4] ?? "Z"}`);
  if (Number.isNaN(ms)) throw new Error(`rows: ${field.name}: ${JSON.stringify(x)} is not a valid time`);
  const frac = (m[3] ?? "").padEnd(9, "0");
  const ns = BigInt(ms) * 1000000n + BigInt(frac);
  const per = 1000000000n / UNIT_PER_SEC[unit];
  if (ns % per !== 0n) throw new Error(`rows: ${field.name}: ${x} has more precision than the column's unit`);
  return ns / per;
}
