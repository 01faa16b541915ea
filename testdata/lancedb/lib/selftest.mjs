// `node gen.mjs --self-test`: assertions over the pure pieces of the harness
// (RUNS, JSON writing, change sets, value conversion, schema mapping).
import { arrow } from "./arrow.mjs";
import { allChanges, diffLive, sortLive } from "./changes.mjs";
import { toJSON } from "./json.mjs";
import { decodeRuns, encodeRuns, encodeRunsBigInt } from "./runs.mjs";
import { selfCheckSchema } from "./schema.mjs";
import { floatJSON, tableRows, timestampJSON } from "./values.mjs";

function eq(what, got, want) {
  const g = toJSON(got), w = toJSON(want);
  if (g !== w) throw new Error(`self-test ${what}:\n got ${g}want ${w}`);
}

const B = (xs) => BigUint64Array.from(xs.map(BigInt));
const U64_MAX = (1n << 64n) - 1n;

function runsCases() {
  const cases = [
    ["empty", [], []],
    ["one", [5], [[5, 0, 1]]],
    ["doc example", [0, 1, 2, 3, 7, 7], [[0, 1, 4], [7, 0, 2]]],
    ["negative delta", [10, 8, 6, 4, 100], [[10, -2, 4], [100, 0, 1]]],
    ["pairs", [1, 5, 6, 7, 3], [[1, 4, 2], [6, 1, 2], [3, 0, 1]]],
    ["row addresses", [4294967296n, 4294967297n, 8589934592n], [[4294967296n, 1, 2], [8589934592n, 0, 1]]],
    ["above 2^53", [U64_MAX - 2n, U64_MAX - 1n, U64_MAX, 0n], [[U64_MAX - 2n, 1, 3], [0, 0, 1]]],
    ["2^53 boundary", [9007199254740991n, 9007199254740992n, 9007199254740993n], [[9007199254740991n, 1, 3]]],
  ];
  for (const [what, input, want] of cases) {
    const vals = B(input);
    const got = encodeRuns(vals);
    eq(`runs ${what}`, got, want.map((t) => t.map(BigInt)));
    eq(`runs ${what} (bigint path)`, encodeRunsBigInt(vals), want.map((t) => t.map(BigInt)));
    eq(`runs ${what} round trip`, decodeRuns(got), input.map(BigInt));
  }
}

function changeCases() {
  // v1: ids 0..4 at version 1; v2: 1 updated, 3 deleted, 9 inserted, 4 moved.
  const v1 = { version: 1, ids: B([0, 1, 2, 3, 4]), lastUpdated: B([1, 1, 1, 1, 1]) };
  const v2 = { version: 2, ids: B([9, 4, 2, 0, 1]), lastUpdated: B([2, 1, 1, 1, 2]) };
  const v3 = { version: 3, ids: B([0, 1, 2, 4, 9]), lastUpdated: B([1, 2, 3, 1, 2]) };
  eq("changes", allChanges([v3, v1, v2]), [
    { from: 1, to: 2, inserted: [[9n, 0n, 1n]], updated: [[1n, 0n, 1n]], deleted: [[3n, 0n, 1n]] },
    { from: 1, to: 3, inserted: [[9n, 0n, 1n]], updated: [[1n, 1n, 2n]], deleted: [[3n, 0n, 1n]] },
    { from: 2, to: 3, inserted: [], updated: [[2n, 0n, 1n]], deleted: [] },
  ]);
  // The comparator path (ids ≥ 2^48) must agree with the packed path.
  const big = 1n << 50n;
  const s = sortLive(BigUint64Array.from([big + 2n, 5n, big]), B([1, 2, 3]));
  eq("sortLive wide", [Array.from(s.ids), Array.from(s.lu)], [[5n, big, big + 2n], [2n, 3n, 1n]]);
  const d = diffLive(sortLive(B([1, 2]), B([1, 1])), sortLive(B([2, 3]), B([1, 1])), 1);
  eq("diffLive", [Array.from(d.inserted), Array.from(d.updated), Array.from(d.deleted)], [[3n], [], [1n]]);
  let threw = false;
  try { sortLive(B([1, 1]), B([1, 1])); } catch { threw = true; }
  if (!threw) throw new Error("self-test: duplicate row ids not refused");
}

function valueCases() {
  eq("float32 0.1", floatJSON(Math.fround(0.1), 24), 0.1);
  eq("float64 0.1", floatJSON(0.1, 53), 0.1);
  eq("float16 0.1", floatJSON(arrow.util.uint16ToFloat64(arrow.util.float64ToUint16(0.1)), 11), 0.1);
  eq("float32 -0", floatJSON(-0, 24), -0);
  eq("float32 max", floatJSON(Math.fround(3.4028234663852886e38), 24), 3.4028235e38);
  eq("float NaN/Inf", [floatJSON(NaN, 53), floatJSON(Infinity, 24), floatJSON(-Infinity, 53)], ["NaN", "Infinity", "-Infinity"]);
  eq("json -0 and bigint", toJSON([-0, 2n ** 64n - 1n, 1.5]).trim(), "[-0,18446744073709551615,1.5]");
  const us = new arrow.TimestampMicrosecond();
  eq("timestamp us", timestampJSON(1577934245006007n, us), "2020-01-02T03:04:05.006007");
  eq("timestamp before 1970", timestampJSON(-1n, new arrow.TimestampNanosecond("UTC")), "1969-12-31T23:59:59.999999999Z");
  eq("timestamp s", timestampJSON(0n, new arrow.TimestampSecond()), "1970-01-01T00:00:00");
  const t = arrow.tableFromArrays({
    i: BigInt64Array.from([-(2n ** 63n), 2n ** 63n - 1n]),
    f: Float32Array.from([0.1, 2.5]),
  });
  eq("tableRows", tableRows(t, ["i", "f"]), [{ i: -(2n ** 63n), f: 0.1 }, { i: 2n ** 63n - 1n, f: 2.5 }]);
  const s = arrow.vectorFromArray(["a", null, "é"], new arrow.Utf8());
  const d = arrow.vectorFromArray([new Date(Date.UTC(2021, 1, 3)), null], new arrow.DateDay());
  const tt = new arrow.Table({ s: s.slice(1, 3), d: arrow.vectorFromArray([null, new Date(Date.UTC(2021, 1, 3))], new arrow.DateDay()) });
  eq("utf8/date with nulls and a slice", tableRows(tt, ["s", "d"]), [{ s: null, d: null }, { s: "é", d: "2021-02-03" }]);
  if (d.length !== 2) throw new Error("self-test: date vector");
  const item = (t) => new arrow.Field("item", t, true);
  const sliced = new arrow.Table({
    i: arrow.vectorFromArray([1, 2, null, 4], new arrow.Int32()).slice(1, 4),
    b: arrow.vectorFromArray([true, false, null, true], new arrow.Bool()).slice(1, 4),
    l: arrow.vectorFromArray([[1], [2, 3], null, []], new arrow.List(item(new arrow.Int32()))).slice(1, 4),
    f: arrow.vectorFromArray([[1, 2], [3, null], null, [7, 8]], new arrow.FixedSizeList(2, item(new arrow.Int32()))).slice(1, 4),
    s: arrow.vectorFromArray([{ a: 1, b: "x" }, { a: null, b: "y" }, null, { a: 4, b: null }],
      new arrow.Struct([new arrow.Field("a", new arrow.Int32(), true), new arrow.Field("b", new arrow.Utf8(), true)])).slice(1, 4),
  });
  eq("sliced int/bool/list/fsl/struct", tableRows(sliced, ["i", "b", "l", "f", "s"]), [
    { i: 2, b: false, l: [2, 3], f: [3, null], s: { a: null, b: "y" } },
    { i: null, b: null, l: null, f: null, s: null },
    { i: 4, b: true, l: [], f: [7, 8], s: { a: 4, b: null } },
  ]);
}

/** Runs every self-check; throws on the first failure. */
export async function selfTest() {
  runsCases();
  changeCases();
  valueCases();
  selfCheckSchema();
}
