// Runs one fixture: its scripted history, the on-disk checks, and the
// read-back of LanceDB's answers for every version.
import fs from "node:fs";
import path from "node:path";
import { readVersion } from "./answers.mjs";
import { allChangesSorted, sortLive } from "./changes.mjs";
import { toJSON } from "./json.mjs";
import { listManifests, readManifest } from "./lancefiles.mjs";
import { checkStep, checkTable, latestManifest } from "./verify.mjs";

/** Labels of the versions one optimize() call commits, by count. */
const OPTIMIZE_LABELS = { 1: ["optimize_rewrite"], 2: ["optimize_reserve", "optimize_rewrite"] };

/**
 * Generates fixture `fx` under `outDir` with connection `db`. Returns a
 * summary {name, versions, ops, script_s, answers_s, answers_bytes}.
 */
export async function generate(db, outDir, fx, { answers, version }) {
  const tableDir = path.join(outDir, `${fx.name}.lance`);
  const ctx = { db, name: fx.name, storageOptions: fx.options, tbl: null };
  const labels = [];
  const t0 = performance.now();
  for (const [i, step] of fx.steps.entries()) {
    const where = `${fx.name} step ${i + 1} (${step.op})`;
    const before = ctx.tbl ? await ctx.tbl.version() : 0;
    const mBefore = ctx.tbl ? latestManifest(tableDir) : null;
    await step.run(ctx);
    const after = await ctx.tbl.version();
    const made = after - before;
    if (step.op === "optimize") {
      if (!OPTIMIZE_LABELS[made]) throw new Error(`${where}: optimize committed ${made} versions`);
      labels.push(...OPTIMIZE_LABELS[made]);
    } else {
      if (made !== 1) throw new Error(`${where}: committed ${made} versions, want 1`);
      labels.push(step.op);
    }
    if (mBefore) checkStep(where, step.expect, mBefore, latestManifest(tableDir));
  }
  const scriptS = (performance.now() - t0) / 1000;
  const { naming, versions } = checkTable(tableDir, fx);
  if (versions.length !== labels.length) throw new Error(`${fx.name}: ${versions.length} versions on disk, ${labels.length} labels`);
  const summary = { name: fx.name, versions: versions.length, ops: labels, script_s: round2(scriptS) };
  if (!answers) return summary;

  const t1 = performance.now();
  const tbl = await db.openTable(fx.name);
  const listed = await tbl.listVersions();
  const stamps = new Map(listed.map((v) => [v.version, v.timestamp.getTime()]));
  const out = {
    name: fx.name,
    lancedb: version,
    stable_row_ids: fx.stable,
    data_storage_version: fx.storageVersion,
    manifest_naming: naming,
    versions: [],
    changes: [],
  };
  const live = [];
  const manifests = listManifests(tableDir).versions;
  for (const v of versions) {
    if (!stamps.has(v)) throw new Error(`${fx.name}: listVersions lacks version ${v}`);
    const r = await readVersion(tbl, v, { withData: fx.data });
    const where = `${fx.name} version ${v}`;
    checkScanOrder(where, r.special._rowaddr, readManifest(manifests.get(v)).fragments.map((f) => f.id));
    if (fx.stable) checkRowVersions(where, v, r.special);
    else checkPlainIds(where, r.special);
    out.versions.push({ version: v, op: labels[v - 1], timestamp_ms: stamps.get(v), ...r.entry });
    live.push({ version: v, ...sortLive(r.ids, r.lastUpdated) });
  }
  out.changes = allChangesSorted(live);
  const file = path.join(outDir, `${fx.name}.answers.json`);
  const text = toJSON(out, 4, ["data"]);
  fs.writeFileSync(file, text);
  return { ...summary, answers_s: round2((performance.now() - t1) / 1000), answers_bytes: Buffer.byteLength(text) };
}

/** Without stable row ids, LanceDB's _rowid must be the row address. */
function checkPlainIds(where, special) {
  const ids = special._rowid, addrs = special._rowaddr;
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] !== addrs[i]) throw new Error(`${where}: row ${i}: _rowid ${ids[i]} ≠ _rowaddr ${addrs[i]} without stable row ids`);
  }
}

/** With stable row ids, 1 ≤ created ≤ last_updated ≤ the version read. */
function checkRowVersions(where, v, special) {
  const c = special._row_created_at_version, u = special._row_last_updated_at_version, ver = BigInt(v);
  for (let i = 0; i < c.length; i++) {
    if (!(c[i] >= 1n && c[i] <= u[i] && u[i] <= ver)) throw new Error(`${where}: row ${i}: created ${c[i]}, last updated ${u[i]}`);
  }
}

/**
 * The answers promise scan order = manifest fragment order, then offset;
 * check that LanceDB's scan really returned rows that way.
 */
function checkScanOrder(where, addrs, fragmentIds) {
  const rank = new Map(fragmentIds.map((id, k) => [id, k]));
  let prevRank = -1, prevOff = -1n;
  for (let i = 0; i < addrs.length; i++) {
    const frag = addrs[i] >> 32n, off = addrs[i] & 0xffffffffn;
    if (!rank.has(frag)) throw new Error(`${where}: row ${i} in fragment ${frag}, not in the manifest`);
    const r = rank.get(frag);
    if (r < prevRank || (r === prevRank && off <= prevOff)) throw new Error(`${where}: scan order broken at row ${i} (fragment ${frag} offset ${off})`);
    prevRank = r; prevOff = off;
  }
}

const round2 = (x) => Math.round(x * 100) / 100;
