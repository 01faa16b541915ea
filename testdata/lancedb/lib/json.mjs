// A small JSON writer that prints BigInt as exact integers (JSON.stringify
// rejects them) and lays out the answers files so they diff well: nested
// containers are indented down to `inlineDepth`, deeper ones on one line.

/**
 * Serializes `value` as JSON text. BigInt → integer literal; numbers must be
 * finite (callers map NaN/±Inf to strings first) and -0 stays "-0".
 * Arrays/objects at depth ≥ inlineDepth, and arrays holding only scalars
 * or RUNS triples, are written on one line. Arrays under a key listed in
 * `bareKeys` get one element per line with no indentation, which keeps
 * large row lists readable without paying for the indentation.
 */
export function toJSON(value, inlineDepth = 3, bareKeys = []) {
  return write(value, 0, inlineDepth, new Set(bareKeys)) + "\n";
}

function write(v, depth, inlineDepth, bare, key) {
  if (v === null) return "null";
  switch (typeof v) {
    case "bigint":
      return v.toString();
    case "number":
      if (!Number.isFinite(v)) throw new Error(`json: non-finite number ${v}`);
      return Object.is(v, -0) ? "-0" : JSON.stringify(v);
    case "string":
      return JSON.stringify(v);
    case "boolean":
      return v ? "true" : "false";
    case "object":
      break;
    default:
      throw new Error(`json: cannot write ${typeof v}`);
  }
  const pad = "  ".repeat(depth + 1), end = "  ".repeat(depth);
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    if (bare.has(key) && depth < inlineDepth) {
      return `[\n${v.map((x) => write(x, inlineDepth, inlineDepth, bare)).join(",\n")}\n${end}]`;
    }
    const flat = depth >= inlineDepth || v.every((x) => x === null || typeof x !== "object" || isScalarArray(x));
    const parts = v.map((x) => write(x, flat ? inlineDepth : depth + 1, inlineDepth, bare));
    return flat ? `[${parts.join(",")}]` : `[\n${pad}${parts.join(`,\n${pad}`)}\n${end}]`;
  }
  const keys = Object.keys(v);
  if (keys.length === 0) return "{}";
  const flat = depth >= inlineDepth;
  const parts = keys.map((k) => `${JSON.stringify(k)}:${flat ? "" : " "}${write(v[k], flat ? inlineDepth : depth + 1, inlineDepth, bare, k)}`);
  return flat ? `{${parts.join(",")}}` : `{\n${pad}${parts.join(`,\n${pad}`)}\n${end}}`;
}

function isScalarArray(x) {
  return Array.isArray(x) && x.every((y) => y === null || typeof y !== "object");
}
