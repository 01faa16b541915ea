// RUNS: a compact, exact encoding of a u64 sequence as [first, delta, count]
// triples, greedily maximal. Row ids and addresses are mostly arithmetic
// progressions, so the answers files stay small while staying exact.

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Encodes a sequence of u64 values (BigUint64Array, or an array of BigInt)
 * as RUNS. Each triple is [first, delta, count] with BigInt members so that
 * the JSON writer prints them as exact integers. An empty input gives [].
 */
export function encodeRuns(values) {
  const n = values.length;
  if (n === 0) return [];
  let max = 0n;
  for (let i = 0; i < n; i++) if (values[i] > max) max = values[i];
  // Numbers are much faster than BigInt; every value and every difference
  // is exact as a double when all values are below 2^53.
  if (max <= MAX_SAFE) {
    const f = new Float64Array(n);
    for (let i = 0; i < n; i++) f[i] = Number(values[i]);
    return encodeRunsNumber(f).map((t) => t.map((x) => BigInt(x)));
  }
  return encodeRunsBigInt(values);
}

/** Greedy RUNS over exact doubles (all values must be integers < 2^53). */
export function encodeRunsNumber(f) {
  const out = [];
  if (f.length === 0) return out;
  let first = f[0], delta = 0, count = 1, prev = f[0];
  for (let i = 1; i < f.length; i++) {
    const v = f[i];
    if (count === 1) {
      delta = v - first;
      count = 2;
    } else if (v - prev === delta) {
      count++;
    } else {
      out.push([first, delta, count]);
      first = v; delta = 0; count = 1;
    }
    prev = v;
  }
  out.push([first, delta, count]);
  return out;
}

/** Greedy RUNS over BigInt values; the slow path for values ≥ 2^53. */
export function encodeRunsBigInt(values) {
  const out = [];
  if (values.length === 0) return out;
  let first = BigInt(values[0]), delta = 0n, count = 1n, prev = first;
  for (let i = 1; i < values.length; i++) {
    const v = BigInt(values[i]);
    if (count === 1n) {
      delta = v - first;
      count = 2n;
    } else if (v - prev === delta) {
      count++;
    } else {
      out.push([first, delta, count]);
      first = v; delta = 0n; count = 1n;
    }
    prev = v;
  }
  out.push([first, delta, count]);
  return out;
}

/** Expands RUNS back into an array of BigInt; used by the self-test. */
export function decodeRuns(runs) {
  const out = [];
  for (const [first, delta, count] of runs) {
    const f = BigInt(first), d = BigInt(delta), c = BigInt(count);
    if (c < 1n) throw new Error(`decode runs: count ${c} < 1`);
    for (let k = 0n; k < c; k++) out.push(f + d * k);
  }
  return out;
}
