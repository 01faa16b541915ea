// Deterministic fixture rows, built straight into Arrow buffers so that the
// multi-million-row fixtures are generated in seconds. Every value is a pure
// function of the row id (and a variant tag), never of a clock or Math.random.
import { arrow } from "./arrow.mjs";

/** The fixture tables' schema: id int64 not null, name utf8, val float64. */
export const BASE_SCHEMA = new arrow.Schema([
  new arrow.Field("id", new arrow.Int64(), false),
  new arrow.Field("name", new arrow.Utf8(), true),
  new arrow.Field("val", new arrow.Float64(), true),
]);

/** 32-bit mix of an id and a variant (murmur3 finalizer); deterministic. */
export function mix32(id, variant) {
  let h = (Math.floor(id / 4294967296) ^ (id >>> 0) ^ Math.imul(variant + 1, 0x9e3779b9)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The row for `id` under `variant` (0 = original rows, 1 = merge_insert
 * source rows, 2 = overwrite rows): name null for every tenth id, val null
 * when the hash says so, otherwise a float with three decimals.
 */
export function rowFor(id, variant) {
  const h = mix32(id, variant);
  const name = id % 10 === 3 ? null : `${["n", "mi", "ow"][variant]}-${id}`;
  const val = h % 17 === 0 ? null : ((h % 2000000) - 1000000) / 1000;
  return { id, name, val };
}

/**
 * An Arrow RecordBatch of BASE_SCHEMA for the given ids (array of numbers,
 * all < 2^53) and variant.
 */
export function makeBatch(ids, variant) {
  const n = ids.length;
  const idv = new BigInt64Array(n);
  const vals = new Float64Array(n);
  const valBits = new Uint8Array((n + 7) >> 3);
  const nameBits = new Uint8Array((n + 7) >> 3);
  const offsets = new Int32Array(n + 1);
  const names = [];
  let valNulls = 0, nameNulls = 0, bytes = 0;
  for (let i = 0; i < n; i++) {
    const r = rowFor(ids[i], variant);
    idv[i] = BigInt(r.id);
    if (r.val === null) valNulls++; else { vals[i] = r.val; valBits[i >> 3] |= 1 << (i & 7); }
    if (r.name === null) nameNulls++; else { nameBits[i >> 3] |= 1 << (i & 7); names.push(r.name); bytes += r.name.length; }
    offsets[i + 1] = bytes;
  }
  // Names are ASCII, so one byte per character.
  const text = Buffer.from(names.join(""), "latin1");
  if (text.length !== bytes) throw new Error("makeBatch: name bytes mismatch");
  const [fId, fName, fVal] = BASE_SCHEMA.fields;
  const children = [
    arrow.makeData({ type: fId.type, length: n, nullCount: 0, data: idv }),
    arrow.makeData({ type: fName.type, length: n, nullCount: nameNulls, nullBitmap: nameBits, valueOffsets: offsets, data: new Uint8Array(text) }),
    arrow.makeData({ type: fVal.type, length: n, nullCount: valNulls, nullBitmap: valBits, data: vals }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(BASE_SCHEMA.fields), length: n, nullCount: 0, children });
  return new arrow.RecordBatch(BASE_SCHEMA, struct);
}

/** ids start, start+1, …, start+n-1 as an array of numbers. */
export function range(start, n) {
  return Array.from({ length: n }, (_, i) => start + i);
}

/**
 * An Arrow Table of BASE_SCHEMA for ids [start, start+n), split into
 * batches of at most `batchRows` rows to bound memory per batch.
 */
export function makeRangeTable(start, n, variant = 0, batchRows = 262144) {
  const batches = [];
  for (let at = 0; at < n; at += batchRows) batches.push(makeBatch(range(start + at, Math.min(batchRows, n - at)), variant));
  return new arrow.Table(BASE_SCHEMA, batches);
}

/** An Arrow Table of BASE_SCHEMA for an explicit id list. */
export function makeIdsTable(ids, variant = 0) {
  return new arrow.Table(BASE_SCHEMA, [makeBatch(ids, variant)]);
}
