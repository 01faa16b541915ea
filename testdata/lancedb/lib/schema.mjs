// Canonical schema: a plain JSON form of an Arrow schema that the Go side
// can compare field by field. The type names are our own stable spelling,
// independent of apache-arrow's toString(), which changes between releases.
import { arrow } from "./arrow.mjs";

const UNIT = ["s", "ms", "us", "ns"];

/** Canonical TYPE string of an apache-arrow DataType; throws on unmapped types. */
export function canonicalType(t) {
  const T = arrow.Type;
  switch (t.typeId) {
    case T.Null: return "null";
    case T.Bool: return "bool";
    case T.Int: {
      if (![8, 16, 32, 64].includes(t.bitWidth)) throw new Error(`schema: int bit width ${t.bitWidth}`);
      return `${t.isSigned ? "int" : "uint"}${t.bitWidth}`;
    }
    case T.Float: {
      const names = { [arrow.Precision.HALF]: "float16", [arrow.Precision.SINGLE]: "float32", [arrow.Precision.DOUBLE]: "float64" };
      if (!(t.precision in names)) throw new Error(`schema: float precision ${t.precision}`);
      return names[t.precision];
    }
    case T.Utf8: return "utf8";
    case T.LargeUtf8: return "large_utf8";
    case T.Binary: return "binary";
    case T.LargeBinary: return "large_binary";
    case T.FixedSizeBinary: return `fixed_size_binary[${t.byteWidth}]`;
    case T.Date: return t.unit === arrow.DateUnit.DAY ? "date32" : "date64";
    case T.Timestamp: {
      const u = unitName(t.unit);
      return t.timezone ? `timestamp[${u}, tz=${t.timezone}]` : `timestamp[${u}]`;
    }
    case T.Time: {
      const u = unitName(t.unit);
      const bits = t.bitWidth === 32 ? "time32" : "time64";
      if ((bits === "time32") !== (u === "s" || u === "ms")) throw new Error(`schema: ${bits} with unit ${u}`);
      return `${bits}[${u}]`;
    }
    case T.Duration: return `duration[${unitName(t.unit)}]`;
    case T.Decimal: {
      if (t.bitWidth !== 128 && t.bitWidth !== 256) throw new Error(`schema: decimal bit width ${t.bitWidth}`);
      return `decimal${t.bitWidth}(${t.precision}, ${t.scale})`;
    }
    case T.List: return "list";
    case T.FixedSizeList: return `fixed_size_list[${t.listSize}]`;
    case T.Struct: return "struct";
    case T.Dictionary: return `dictionary<${canonicalType(t.indices)}>`;
    default:
      // LargeList, Map, Union, Interval, ... are not mapped yet: refuse
      // rather than invent a spelling the Go side does not know.
      throw new Error(`schema: unmapped arrow type ${t} (typeId ${t.typeId})`);
  }
}

function unitName(u) {
  if (!(u in UNIT)) throw new Error(`schema: time unit ${u}`);
  return UNIT[u];
}

/** Canonical FIELD object of an apache-arrow Field. */
export function canonicalField(f) {
  const out = { name: f.name, type: canonicalType(f.type), nullable: !!f.nullable, metadata: mapToObject(f.metadata) };
  const T = arrow.Type;
  switch (f.type.typeId) {
    case T.List: case T.FixedSizeList: case T.Struct:
      out.children = f.type.children.map(canonicalField);
      break;
    case T.Dictionary:
      // The values field has no name or nullability of its own in Arrow;
      // fix them so both sides agree.
      out.children = [{ name: "values", type: canonicalType(f.type.dictionary), nullable: true, metadata: {} }];
      break;
  }
  return out;
}

/** Canonical schema object {fields, metadata} of an apache-arrow Schema. */
export function canonicalSchema(s) {
  return { fields: s.fields.map(canonicalField), metadata: mapToObject(s.metadata) };
}

function mapToObject(m) {
  const o = {};
  if (!m) return o;
  for (const k of [...m.keys()].sort()) o[k] = m.get(k);
  return o;
}

/** Unit self-check of the mapping; throws on the first mismatch. */
export function selfCheckSchema() {
  const F = (n, t, nl = true) => new arrow.Field(n, t, nl);
  const cases = [
    [new arrow.Null(), "null"], [new arrow.Bool(), "bool"],
    [new arrow.Int8(), "int8"], [new arrow.Int16(), "int16"], [new arrow.Int32(), "int32"], [new arrow.Int64(), "int64"],
    [new arrow.Uint8(), "uint8"], [new arrow.Uint16(), "uint16"], [new arrow.Uint32(), "uint32"], [new arrow.Uint64(), "uint64"],
    [new arrow.Float16(), "float16"], [new arrow.Float32(), "float32"], [new arrow.Float64(), "float64"],
    [new arrow.Utf8(), "utf8"], [new arrow.LargeUtf8(), "large_utf8"], [new arrow.Binary(), "binary"], [new arrow.LargeBinary(), "large_binary"],
    [new arrow.FixedSizeBinary(16), "fixed_size_binary[16]"],
    [new arrow.DateDay(), "date32"], [new arrow.DateMillisecond(), "date64"],
    [new arrow.TimestampSecond(), "timestamp[s]"], [new arrow.TimestampMillisecond(), "timestamp[ms]"],
    [new arrow.TimestampMicrosecond(), "timestamp[us]"], [new arrow.TimestampNanosecond(), "timestamp[ns]"],
    [new arrow.TimestampMicrosecond("UTC"), "timestamp[us, tz=UTC]"],
    [new arrow.TimeSecond(), "time32[s]"], [new arrow.TimeMillisecond(), "time32[ms]"],
    [new arrow.TimeMicrosecond(), "time64[us]"], [new arrow.TimeNanosecond(), "time64[ns]"],
    [new arrow.Duration(arrow.TimeUnit.MILLISECOND), "duration[ms]"],
    [new arrow.Decimal(2, 10, 128), "decimal128(10, 2)"], [new arrow.Decimal(3, 40, 256), "decimal256(40, 3)"],
    [new arrow.List(F("item", new arrow.Int32())), "list"],
    [new arrow.FixedSizeList(4, F("item", new arrow.Float32())), "fixed_size_list[4]"],
    [new arrow.Struct([F("a", new arrow.Int32())]), "struct"],
    [new arrow.Dictionary(new arrow.Utf8(), new arrow.Int16()), "dictionary<int16>"],
  ];
  for (const [t, want] of cases) {
    const got = canonicalType(t);
    if (got !== want) throw new Error(`schema self-check: ${t} → ${got}, want ${want}`);
  }
  for (const t of [new arrow.IntervalDayTime(), new arrow.Map_(F("entries", new arrow.Struct([F("key", new arrow.Utf8(), false), F("value", new arrow.Int32())])))]) {
    let threw = false;
    try { canonicalType(t); } catch { threw = true; }
    if (!threw) throw new Error(`schema self-check: ${t} should be refused`);
  }
  const s = new arrow.Schema(
    [F("id", new arrow.Int64(), false), F("tags", new arrow.List(F("item", new arrow.Utf8()))), F("d", new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()))],
    new Map([["k", "v"]]));
  const got = JSON.stringify(canonicalSchema(s));
  const want = JSON.stringify({
    fields: [
      { name: "id", type: "int64", nullable: false, metadata: {} },
      { name: "tags", type: "list", nullable: true, metadata: {}, children: [{ name: "item", type: "utf8", nullable: true, metadata: {} }] },
      { name: "d", type: "dictionary<int32>", nullable: true, metadata: {}, children: [{ name: "values", type: "utf8", nullable: true, metadata: {} }] },
    ],
    metadata: { k: "v" },
  });
  if (got !== want) throw new Error(`schema self-check: canonicalSchema\n got ${got}\nwant ${want}`);
}
