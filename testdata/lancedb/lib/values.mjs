// Converts LanceDB query results (apache-arrow tables) to the JSON values of
// an answers file's "data": exact integers, shortest round-trip floats,
// RFC 3339 times. It reads the raw Arrow buffers because apache-arrow's
// Vector.get rounds 64-bit timestamps through doubles.
import { arrow } from "./arrow.mjs";

const T = arrow.Type;
const UNITS_PER_SEC = [1n, 1000n, 1000000n, 1000000000n];
const FRAC_DIGITS = [0, 3, 6, 9];
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Returns the rows of `table` as plain objects whose keys follow the given
 * column names (schema order), converted as described in the package docs.
 */
export function tableRows(table, columns) {
  const cols = columns.map((name) => {
    const v = table.getChild(name);
    if (!v) throw new Error(`values: result has no column ${name}`);
    return { name, values: vectorValues(v) };
  });
  const rows = new Array(table.numRows);
  for (let r = 0; r < table.numRows; r++) {
    const o = {};
    for (const c of cols) o[c.name] = c.values[r];
    rows[r] = o;
  }
  return rows;
}

/** JSON values of every cell of a (possibly chunked) Vector. */
export function vectorValues(vector) {
  const out = [];
  for (const d of vector.data) for (let i = 0; i < d.length; i++) out.push(cell(d, i));
  return out;
}

function valid(d, i) {
  if (d.typeId === T.Null) return false;
  if (!d.nullBitmap || d.nullBitmap.length === 0 || d.nullCount === 0) return true;
  const j = d.offset + i;
  return ((d.nullBitmap[j >> 3] >> (j & 7)) & 1) === 1;
}

// apache-arrow slices lazily: Data.offset counts from the original array,
// value and offset buffers are already cut at the offset, but validity and
// boolean bitmaps are not (they are indexed in bits from the original
// start); fixed-size-list and struct children are sliced along with it.
function cell(d, i) {
  if (!valid(d, i)) return null;
  const t = d.type;
  switch (t.typeId) {
    case T.Bool: {
      const j = d.offset + i;
      return ((d.values[j >> 3] >> (j & 7)) & 1) === 1;
    }
    case T.Int: return t.bitWidth === 64 ? BigInt(d.values[i]) : d.values[i];
    case T.Float:
      if (t.precision === arrow.Precision.HALF) return floatJSON(arrow.util.uint16ToFloat64(d.values[i]), 11);
      return floatJSON(d.values[i], t.precision === arrow.Precision.SINGLE ? 24 : 53);
    case T.Utf8: case T.LargeUtf8:
      return utf8.decode(bytesAt(d, i));
    case T.Binary: case T.LargeBinary:
      return Buffer.from(bytesAt(d, i)).toString("base64");
    case T.FixedSizeBinary:
      return Buffer.from(d.values.subarray(i * t.byteWidth, (i + 1) * t.byteWidth)).toString("base64");
    case T.Date:
      if (t.unit === arrow.DateUnit.DAY) return isoDate(BigInt(d.values[i]) * 86400000n);
      return isoDate(BigInt(d.values[i]));
    case T.Timestamp:
      return timestampJSON(BigInt(d.values[i]), t);
    case T.Time: {
      // "HH:MM:SS" plus the unit's fractional digits, as datafile.AppendJSON.
      const per = UNITS_PER_SEC[t.unit], v = BigInt(d.values[i]);
      const sec = v / per, digits = FRAC_DIGITS[t.unit];
      const p2 = (x) => x.toString().padStart(2, "0");
      let s = `${p2(sec / 3600n)}:${p2((sec % 3600n) / 60n)}:${p2(sec % 60n)}`;
      if (digits > 0) s += "." + (v % per).toString().padStart(digits, "0");
      return s;
    }
    case T.Duration: return BigInt(d.values[i]);
    case T.Decimal: {
      // The exact decimal text of the little-endian two's complement words.
      const words = t.bitWidth / 32;
      let v = 0n;
      for (let k = words - 1; k >= 0; k--) v = (v << 32n) | BigInt(d.values[i * words + k] >>> 0);
      v = BigInt.asIntN(t.bitWidth, v);
      const neg = v < 0n;
      let s = (neg ? -v : v).toString();
      if (t.scale > 0) {
        s = s.padStart(t.scale + 1, "0");
        s = s.slice(0, s.length - t.scale) + "." + s.slice(s.length - t.scale);
      }
      return (neg ? "-" : "") + s;
    }
    case T.List: {
      const child = d.children[0];
      const a = [];
      for (let k = Number(d.valueOffsets[i]); k < Number(d.valueOffsets[i + 1]); k++) a.push(cell(child, k));
      return a;
    }
    case T.FixedSizeList: {
      const child = d.children[0], n = t.listSize, a = [];
      for (let k = i * n; k < (i + 1) * n; k++) a.push(cell(child, k));
      return a;
    }
    case T.Dictionary: {
      // The key indexes the dictionary vector, whose chunks are laid end
      // to end.
      let k = Number(d.values[i]);
      for (const c of d.dictionary.data) {
        if (k < c.length) return cell(c, k);
        k -= c.length;
      }
      throw new Error(`values: dictionary key ${d.values[i]} past the items`);
    }
    case T.Struct: {
      const o = {};
      t.children.forEach((f, k) => { o[f.name] = cell(d.children[k], i); });
      return o;
    }
    default:
      throw new Error(`values: no JSON mapping for arrow type ${t}`);
  }
}

function bytesAt(d, i) {
  const s = Number(d.valueOffsets[i]), e = Number(d.valueOffsets[i + 1]);
  return d.values.subarray(s, e);
}

/**
 * Shortest decimal text that parses back to the same float of the given
 * significand width (24 for float32), so a float32 0.1 is written "0.1".
 * NaN and infinities become strings, which JSON cannot hold as numbers.
 */
export function floatJSON(x, mantissaBits) {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  // x === 0 also keeps -0, which the digit search below would turn into 0.
  if (mantissaBits === 53 || x === 0) return x;
  const round = mantissaBits === 24 ? Math.fround : (y) => arrow.util.uint16ToFloat64(arrow.util.float64ToUint16(y));
  for (let p = 1; p <= 17; p++) {
    const y = Number(x.toPrecision(p));
    if (round(y) === x) return y;
  }
  return x;
}

function isoDate(ms) {
  const s = new Date(Number(ms)).toISOString();
  if (s.length !== 24) throw new Error(`values: date ${ms} ms outside years 0000-9999`);
  return s.slice(0, 10);
}

/** RFC 3339 text of a timestamp value in the type's unit. */
export function timestampJSON(v, t) {
  const per = UNITS_PER_SEC[t.unit];
  let sec = v / per, frac = v % per;
  if (frac < 0n) { frac += per; sec -= 1n; }
  const iso = new Date(Number(sec) * 1000).toISOString();
  if (iso.length !== 24) throw new Error(`values: timestamp ${v} outside years 0000-9999`);
  let s = iso.slice(0, 19);
  const digits = FRAC_DIGITS[t.unit];
  if (digits > 0) s += "." + frac.toString().padStart(digits, "0");
  if (t.timezone) {
    // Only UTC-equivalent zones can be written without a zone database.
    if (!["UTC", "Z", "+00:00", "Etc/UTC"].includes(t.timezone)) throw new Error(`values: time zone ${t.timezone} not supported`);
    s += "Z";
  }
  return s;
}
