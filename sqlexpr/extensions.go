package sqlexpr

// Where sqlexpr and LanceDB 0.39 differ, on purpose.
//
// Accepted by sqlexpr, refused by LanceDB ("… is not supported SQL in
// lance"), with standard SQL semantics. LanceDBUnsupported names each of
// them in an expression: mvd warns when a view uses one (LanceDB's own
// refresh of that view fails), or refuses it (--lancedb-compatible).
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
//   - CAST(x AS VARCHAR|TEXT|CHAR…): the same as CAST(x AS STRING); the
//     other type names LanceDB refuses ("Unsupported data type": INT8,
//     INT4, INT2, LONG, REAL, FLOAT4, FLOAT8, DOUBLE PRECISION, BOOL,
//     BYTEA, BLOB, VARBINARY, TIMESTAMP WITH[OUT] TIME ZONE) likewise.
//   - IS [NOT] UNKNOWN: the same as IS [NOT] NULL on a boolean.
//   - Unary plus (+x): x.
//   - LIKE … ESCAPE with a character other than backslash.
//
// x::type (CAST) and TRY_CAST (NULL where CAST fails) are accepted by
// both (LanceDB 0.39 plans them in a view).
//
// Accepted by sqlexpr, refused by LanceDB as a view filter only (not
// named by LanceDBUnsupported, which does not know the column types):
//
//   - LIKE/ILIKE on a LargeUtf8 column (LanceDB's view planner trips on
//     the Utf8 pattern; its query API accepts the same filter).
//
// Refused by sqlexpr although LanceDB's query API accepts them:
//
//   - volatile functions (random, now, current_date, current_time,
//     current_timestamp, uuid, version, arrow_typeof, arrow_metadata, …):
//     LanceDB refuses them when creating a view ("not immutable"), and
//     mvd's queries (`mvd table scan --where/--select`) keep the view
//     dialect so that what works there works in a view.
//
// Same as LanceDB although it may look like a quirk (kept for exact
// compatibility, see lancedb-mv-semantics.md §6, §6.1 and §9; each is a
// differential case in testdata/cases.txt or cases_tz.txt):
//
//   - Double quotes mean two things. A projection (ParseProjection,
//     CompileProjection, a select list) reads "x" as the string 'x'; a
//     filter (ParseFilter, CompileFilter, a statement's WHERE) reads it as
//     the column x, matched case-sensitively ("st"."a" is a struct field,
//     name = "Bob" wants a column Bob). Backticks are a case-sensitive
//     name in both; a bare name matches a field exactly, else its unique
//     case-insensitive match. Trees remember their dialect, and Compile /
//     CompileFilterExpr refuse a tree of the other one.
//   - A literal next to a column in a comparison, arithmetic, IN or
//     BETWEEN takes the column's type or the expression is refused
//     (ErrType): `i32 * 1.5`, `i32 > '30'`, `d > '2024-01-01'`. Lance
//     applies this only at the top of the expression and through AND/OR
//     (and NOT BETWEEN); inside NOT, IS, functions, CAST or nested
//     arithmetic DataFusion's coercion applies: `u8 + 250` is UInt8 and
//     wraps, `u8 + 250 + 1` and `chr(u8 + 65)` compute in Int64,
//     `abs(i32 * 1.5)` is Float64.
//   - In a filter, regexp_match(…) reached through operators, NOT and IS
//     [NOT] NULL means "matched" (Lance rewrites it to `regexp_match(…) IS
//     NOT NULL`), so `WHERE regexp_match(s, 'a') IS NOT NULL` keeps every
//     row.
//   - Integer arithmetic wraps at the operand width; integer division
//     truncates; integer division or modulo by zero fails (ErrEval);
//     float division by zero gives ±Inf or NaN.
//   - Floats compare in Arrow's order: a NaN with the sign bit set (0/0,
//     sqrt(-1), x % 0, cos(inf), as x86-64 makes them) below every number,
//     one without ('NaN', ln(-1), -sqrt(-1)) above; NaNs of one sign are
//     equal (also in IN lists). -0.0 equals 0.0 against a constant but
//     comes first when two computed values are compared (`f64 * 0 <
//     f64 * -1 * 0`), as in LanceDB.
//   - power() always computes in Float64.
//   - concat() skips NULLs, || propagates them.
//   - Integer literals above Int64 are UInt64 up to 2^64-1, then Float64;
//     a negated one is a Float64 (-9223372036854775808 included).
//   - A list literal [a, b] is a constant list of literals of one type
//     (not empty, no NULL among strings, no DATE '…'); as a function
//     argument it is make_array(a, b) with DataFusion's coercion
//     (array_length([1, 2.5]), array_has_any(tags, [name, 'x'])).
//   - Lists compare element by element, a NULL element before any value
//     and equal to another NULL, then by length (`tags = ['a', 'b']`).
//   - array_has_any / array_has_all compare elements as values with NULL
//     equal to NULL; an empty second list gives false / true, even for a
//     NULL first one.
//   - A dictionary column compares and computes as its values; projected
//     bare, it stays a dictionary column.
//   - Timestamps with a time zone: a zone-less literal (TIMESTAMP '…') next
//     to a zoned column, or any zone-less timestamp cast to a zoned one, is
//     read as local time in that zone, and one that falls in a DST gap or
//     fold is refused; an offset or zone written in the literal first gives
//     its UTC clock time, which is then read in the column's zone (so
//     '… 00:00:00+00:00' equals '… 00:00:00', and '… -04:00' is four hours
//     later on the clock). A string cast straight to a zoned type honours
//     its offset. CAST to DATE gives the local date, CAST to text the local
//     time with its offset, date_part and date_trunc work on local time;
//     a zoned value cast to a zone-less timestamp keeps its UTC clock.
//   - _rowid and _rowaddr are columns of a query's filter
//     (CompileFilterWithRowIDs: the stable row id, or the row address
//     without stable row ids; the row address) but not of a view's
//     (CompileFilter refuses them: "unknown column '_rowid'", as LanceDB
//     does when creating the view).
//   - date ± integer is the date that many days later (earlier); at the
//     top next to the column (`d + 1`) Lance's literal rule refuses it.
//   - Constant subexpressions are folded (so `42` is NOT NULL), and
//     coalesce drops arguments after the first NOT NULL one (so
//     coalesce(id, 1) over a NOT NULL id is the identity column id).
//
// Known differences that remain (README, "SQL expressions"):
//
//   - left(), right(), md5(), upper(NULL) and concat() with a NULL literal
//     argument return Utf8View in LanceDB 0.39 (whose views over
//     left/right cannot even refresh); sqlexpr returns Utf8, because mvd
//     writes Lance tables without view types.
//   - Transcendental functions (cos, exp, ln, …) use Go's math package
//     and may differ from Rust's libm in the last bit; on Float32 inputs
//     Rust computes in single precision, sqlexpr in double precision then
//     rounds, so tan(f32) can differ by one Float32 ulp.
//   - Decimal, view (Utf8View) and interval columns, and dictionary
//     fields inside structs, have no operators or functions in sqlexpr
//     (ErrType/ErrUnsupported when an expression computes with them): not
//     built yet; Decimal128 values would also need exact decimal
//     arithmetic with DataFusion's precision and scale rules.
//   - repeat() beyond 16 MiB (or a count above 2^24) and lpad/rpad beyond
//     2^22 characters fail with ErrEval, to bound memory on hostile input.
//   - Subtracting timestamps or dates (a Duration) and interval
//     arithmetic are refused (ErrType): no interval type. Date ± integer
//     works (days), as in LanceDB; LanceDB's where() even fails on
//     `d + i32 > DATE '…'` ("Data types must be compatible for interval
//     comparison"), which sqlexpr answers.
//   - Arithmetic mixing a signed and an unsigned 64-bit integer (below
//     the top, where Lance's literal rule does not make `u64 + 1` UInt64)
//     is computed exactly and can be compared (`u64 + 1 > 0`,
//     `_rowid % 2 = 0`, as LanceDB does in Decimal128), but it is refused
//     (ErrType) as a result, as a function argument, under IS NULL or IN,
//     and in a division: DataFusion gives a Decimal128 there, and sqlexpr
//     has no decimal type (testdata/cases.txt "K" cases).
//   - A date_trunc whose local result falls in a DST gap takes Go's
//     resolution of that wall time; DataFusion's may differ (zones whose
//     DST changes at midnight).
