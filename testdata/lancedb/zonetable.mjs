// zonetable.mjs builds the table of zoned timestamps that sqlcases.mjs
// --zones runs its cases against: the same instants, every 30 minutes
// over three days around each 2025 DST transition of New York, St John's
// (-03:30/-02:30) and Adelaide (+09:30/+10:30), plus a NULL, in columns
// of several zones (Kolkata, +05:30, has no DST). A zone-less copy (ts)
// and one in milliseconds (ms_ny) cover the casts between them.
export function buildZoneTable(arrow) {
  const zones = {
    ny: "America/New_York", kol: "Asia/Kolkata", adl: "Australia/Adelaide",
    stj: "America/St_Johns", utc: "UTC",
  };
  const ms = [];
  for (const day of ["2025-03-08", "2025-04-05", "2025-10-04", "2025-11-01"]) {
    const t0 = Date.parse(day + "T00:00:00Z");
    for (let k = 0; k < 3 * 48; k++) ms.push(t0 + k * 1800000 + (k % 5) * 2);
  }
  ms.push(null);
  const fields = [new arrow.Field("id", new arrow.Int64(), false)];
  const cols = { id: arrow.vectorFromArray(ms.map((_, i) => BigInt(i)), new arrow.Int64()) };
  const add = (name, type) => {
    fields.push(new arrow.Field(name, type, true));
    cols[name] = arrow.vectorFromArray(ms, type);
  };
  for (const [k, z] of Object.entries(zones)) add("ts_" + k, new arrow.TimestampMicrosecond(z));
  add("ts", new arrow.TimestampMicrosecond());
  add("ms_ny", new arrow.TimestampMillisecond("America/New_York"));
  const schema = new arrow.Schema(fields);
  return new arrow.Table(schema, arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length: ms.length,
    nullCount: 0,
    children: schema.fields.map((f) => cols[f.name].data[0]),
  }));
}
