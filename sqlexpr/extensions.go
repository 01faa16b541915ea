package sqlexpr

// Where sqlexpr and LanceDB 0.39 differ, on purpose.
//
// Accepted by sqlexpr, refused by LanceDB ("… is not supported SQL in
// lance"), with standard SQL semantics:
//
//   - CASE, both forms. Branches are evaluated lazily per row, so
//     `CASE WHEN x = 0 THEN 0 ELSE 10 / x END` never divides by zero. The
//     result type is the common type of the THEN/ELSE values.
//   - SUBSTR(s, start[, len]) and SUBSTRING(s FROM start [FOR len]):
//     1-based, in characters; a start before 1 shortens the result as in
//     PostgreSQL (SUBSTRING('abc' FROM 0 FOR 2) = 'a').
//   - TRIM([BOTH|LEADING|TRAILING] [chars FROM] s): btrim/ltrim/rtrim.
//   - CEIL, FLOOR: Float64 (Float32 for a Float32 argument), like ROUND.
//   - EXTRACT(field FROM x): date_part('field', x), so Int32.
//   - IS [NOT] DISTINCT FROM: NULL-safe comparison, never NULL.
//   - CAST(x AS VARCHAR|TEXT|CHAR…): the same as CAST(x AS STRING).
//   - x::type (CAST), and TRY_CAST, which gives NULL where CAST fails.
//   - IS [NOT] UNKNOWN: the same as IS [NOT] NULL on a boolean.
//   - Unary plus (+x): x.
//   - LIKE … ESCAPE with a character other than backslash.
//
// Accepted by sqlexpr, refused by LanceDB as a view filter only:
//
//   - LIKE/ILIKE on a LargeUtf8 column (LanceDB's view planner trips on
//     the Utf8 pattern; its query API accepts the same filter).
//
// Refused by sqlexpr although LanceDB's query API accepts them:
//
//   - volatile functions (random, now, current_date, current_time,
//     current_timestamp, uuid, version, arrow_typeof, arrow_metadata, …):
//     LanceDB refuses them when creating a view ("not immutable"), which is
//     the only place mvd evaluates expressions.
//
// Same as LanceDB although it may look like a quirk (kept for exact
// compatibility, see lancedb-mv-semantics.md §6 and §9):
//
//   - A literal next to a column in a comparison, arithmetic, IN or
//     BETWEEN takes the column's type or the expression is refused
//     (ErrType): `i32 * 1.5`, `i32 > '30'`, `d > '2024-01-01'`. Lance
//     applies this only at the top of the expression and through AND/OR
//     (and NOT BETWEEN); inside NOT, IS, functions, CAST or nested
//     arithmetic DataFusion's coercion applies: `u8 + 250` is UInt8 and
//     wraps, `u8 + 250 + 1` and `chr(u8 + 65)` compute in Int64,
//     `abs(i32 * 1.5)` is Float64.
//   - Integer arithmetic wraps at the operand width; integer division
//     truncates; integer division or modulo by zero fails (ErrEval);
//     float division by zero gives ±Inf or NaN.
//   - power() always computes in Float64.
//   - concat() skips NULLs, || propagates them.
//   - "text" in double quotes is a string literal, not an identifier.
//   - Constant subexpressions are folded (so `42` is NOT NULL), and
//     coalesce drops arguments after the first NOT NULL one (so
//     coalesce(id, 1) over a NOT NULL id is the identity column id).
//
// Known differences that remain:
//
//   - left(), right(), md5(), upper(NULL) and concat() with a NULL literal
//     argument return
//     Utf8View in LanceDB 0.39 (whose views over left/right cannot even
//     refresh); sqlexpr returns Utf8.
//   - Transcendental functions (cos, exp, ln, …) use Go's math package
//     and may differ from Rust's libm in the last bit; on Float32 inputs
//     Rust computes in single precision, sqlexpr in double precision then
//     rounds, so tan(f32) can differ by one Float32 ulp.
//   - Decimal, dictionary, view (Utf8View) and interval columns are not
//     supported (ErrUnsupported).
//   - repeat() beyond 16 MiB (or a count above 2^24) and lpad/rpad beyond
//     2^22 characters fail with ErrEval, to bound memory on hostile input.
//   - Timestamps with a time zone other than UTC: CAST to text is refused
//     and date_part/date_trunc work in UTC (DataFusion uses the zone).
//   - Subtracting timestamps (a Duration) and date/interval arithmetic
//     are not supported.
//   - Arithmetic mixing Int64 and UInt64 (also array_length(…) + 1) is
//     refused (ErrType): DataFusion computes it in Decimal128(21, 0).
//     Comparisons between them are supported and exact.
