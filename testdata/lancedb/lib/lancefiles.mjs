// Just enough of the Lance on-disk format to check that a LanceDB option
// really took effect (manifest naming, file version, stable row ids) instead
// of trusting the option names. Field numbers: see docs/lance-format.md.
import fs from "node:fs";
import path from "node:path";

const U64_MAX = (1n << 64n) - 1n;

/** Reads one protobuf varint at buf[pos]; returns [BigInt value, next pos]. */
function varint(buf, pos) {
  let v = 0n, shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error("protobuf: truncated varint");
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [v, pos];
    shift += 7n;
    if (shift > 63n) throw new Error("protobuf: varint too long");
  }
}

/**
 * Splits a protobuf message into a Map field number → array of raw values
 * (BigInt for varint/fixed, Buffer for length-delimited).
 */
export function protoFields(buf) {
  const out = new Map();
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = varint(buf, pos);
    const num = Number(key >> 3n), wt = Number(key & 7n);
    let val;
    switch (wt) {
      case 0: [val, pos] = varint(buf, pos); break;
      case 1: val = buf.readBigUInt64LE(pos); pos += 8; break;
      case 5: val = BigInt(buf.readUInt32LE(pos)); pos += 4; break;
      case 2: {
        let len;
        [len, pos] = varint(buf, pos);
        const end = pos + Number(len);
        if (end > buf.length) throw new Error(`protobuf: field ${num} overruns message`);
        val = buf.subarray(pos, end); pos = end; break;
      }
      default: throw new Error(`protobuf: wire type ${wt} of field ${num}`);
    }
    if (!out.has(num)) out.set(num, []);
    out.get(num).push(val);
  }
  return out;
}

const one = (m, n, dflt) => (m.has(n) ? m.get(n)[m.get(n).length - 1] : dflt);

/** Decodes the parts of a manifest file the generator checks. */
export function readManifest(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 16 || buf.subarray(buf.length - 4).toString("latin1") !== "LANC") throw new Error(`${file}: no LANC magic`);
  const pos = Number(buf.readBigInt64LE(buf.length - 16));
  const len = buf.readUInt32LE(pos);
  const m = protoFields(buf.subarray(pos + 4, pos + 4 + len));
  const df = m.has(15) ? protoFields(one(m, 15)) : new Map();
  return {
    version: one(m, 3, 0n),
    readerFlags: one(m, 9, 0n),
    writerFlags: one(m, 10, 0n),
    nextRowId: one(m, 14, 0n),
    dataFormat: df.has(2) ? one(df, 2).toString() : "",
    fragments: (m.get(2) || []).map((raw) => {
      const f = protoFields(raw);
      const del = f.has(3) ? protoFields(one(f, 3)) : null;
      return {
        id: one(f, 1, 0n),
        physicalRows: one(f, 4, 0n),
        hasInlineRowIds: f.has(5),
        hasLastUpdated: f.has(7) || f.has(8),
        hasCreated: f.has(9) || f.has(10),
        files: (f.get(2) || []).map((d) => {
          const df2 = protoFields(d);
          return { path: one(df2, 1).toString(), major: one(df2, 4, 0n), minor: one(df2, 5, 0n) };
        }),
        deletion: del && { type: one(del, 1, 0n), readVersion: one(del, 2, 0n), id: one(del, 3, 0n), numDeleted: one(del, 4, 0n) },
      };
    }),
  };
}

/** Reads (major, minor) from a Lance data file's 40-byte footer. */
export function dataFileVersion(file) {
  const fd = fs.openSync(file, "r");
  try {
    const size = fs.fstatSync(fd).size;
    const tail = Buffer.alloc(40);
    if (size < 40 || fs.readSync(fd, tail, 0, 40, size - 40) !== 40) throw new Error(`${file}: shorter than a footer`);
    if (tail.subarray(36).toString("latin1") !== "LANC") throw new Error(`${file}: no LANC magic`);
    return { major: tail.readUInt16LE(32), minor: tail.readUInt16LE(34) };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Lists `_versions/` and returns {naming: "v1"|"v2", versions: Map version →
 * manifest path}. Throws when names mix both schemes or none parse.
 */
export function listManifests(tableDir) {
  const dir = path.join(tableDir, "_versions");
  const versions = new Map();
  const schemes = new Set();
  for (const name of fs.readdirSync(dir)) {
    const m = /^(\d+)\.manifest$/.exec(name);
    if (!m) continue;
    const stem = m[1];
    if (stem.length === 20) {
      schemes.add("v2");
      versions.set(Number(U64_MAX - BigInt(stem)), path.join(dir, name));
    } else {
      schemes.add("v1");
      versions.set(Number(stem), path.join(dir, name));
    }
  }
  if (schemes.size !== 1) throw new Error(`${dir}: manifest naming schemes found: [${[...schemes]}]`);
  return { naming: [...schemes][0], versions };
}

/** The footer (major, minor) that a table data_storage_version must produce. */
export function expectedFooter(storageVersion) {
  // 2.0 files carry the legacy footer number 0.3 (docs/lance-format.md §3.1);
  // legacy (format 0.1, manifests say "0.1") files say 0.2.
  const m = { "0.1": [0, 2], "2.0": [0, 3], "2.1": [2, 1], "2.2": [2, 2] }[storageVersion];
  if (!m) throw new Error(`unknown data storage version ${storageVersion}`);
  return { major: m[0], minor: m[1] };
}
