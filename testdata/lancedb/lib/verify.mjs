// On-disk checks that a fixture table is what its definition says: LanceDB
// silently ignores misspelled storage options, so the generator looks at
// the written manifests and data files instead of trusting the options.
import fs from "node:fs";
import path from "node:path";
import { dataFileVersion, expectedFooter, listManifests, readManifest } from "./lancefiles.mjs";

const STABLE_FLAG = 2n;
const DELETION_TYPES = { arrow: 0n, bin: 1n };

/** Latest manifest of a table directory, decoded. */
export function latestManifest(tableDir) {
  const { versions } = listManifests(tableDir);
  const latest = Math.max(...versions.keys());
  return readManifest(versions.get(latest));
}

/**
 * Checks a step's `expect` against the manifest it committed (`after`) and
 * the one before it; throws with the fixture and step in the message.
 */
export function checkStep(where, expect, before, after) {
  if (!expect) return;
  if (expect.deletion) {
    const want = DELETION_TYPES[expect.deletion.type];
    const hit = after.fragments.some((f) => f.deletion && f.deletion.type === want &&
      f.deletion.readVersion === before.version &&
      (expect.deletion.numDeleted === undefined || f.deletion.numDeleted === BigInt(expect.deletion.numDeleted)));
    if (!hit) {
      const got = after.fragments.filter((f) => f.deletion).map((f) => `frag ${f.id}: type ${f.deletion.type} n=${f.deletion.numDeleted} rv=${f.deletion.readVersion}`);
      throw new Error(`${where}: expected a new .${expect.deletion.type} deletion file (${expect.deletion.numDeleted ?? "any"} rows); deletion files: [${got.join("; ")}]`);
    }
  }
  if (expect.fragmentDropped && after.fragments.length !== before.fragments.length - 1) {
    throw new Error(`${where}: expected one fragment dropped, fragments ${before.fragments.length} → ${after.fragments.length}`);
  }
}

/**
 * Checks the whole table against the fixture definition `fx`: naming
 * scheme, contiguous versions, per-manifest data format and stable-row-id
 * flag and sequences, every data file's footer, required deletion files,
 * fragment sizes of big tables. Returns {naming, versions}.
 */
export function checkTable(tableDir, fx) {
  const { naming, versions } = listManifests(tableDir);
  if (naming !== fx.naming) throw new Error(`${fx.name}: manifest naming ${naming}, want ${fx.naming}`);
  const nums = [...versions.keys()].sort((a, b) => a - b);
  nums.forEach((v, i) => { if (v !== i + 1) throw new Error(`${fx.name}: versions not contiguous from 1: [${nums}]`); });
  for (const v of nums) {
    const m = readManifest(versions.get(v));
    const where = `${fx.name} version ${v}`;
    if (m.dataFormat !== fx.storageVersion) throw new Error(`${where}: data_format ${m.dataFormat}, want ${fx.storageVersion}`);
    const stable = (m.readerFlags & STABLE_FLAG) !== 0n;
    if (stable !== fx.stable) throw new Error(`${where}: stable row ids flag ${stable}, want ${fx.stable} (reader flags ${m.readerFlags})`);
    for (const f of m.fragments) {
      const seqs = f.hasInlineRowIds && f.hasCreated && f.hasLastUpdated;
      if (fx.stable && !seqs) throw new Error(`${where}: fragment ${f.id} lacks inline row id / version sequences`);
      if (!fx.stable && (f.hasInlineRowIds || f.hasCreated || f.hasLastUpdated)) throw new Error(`${where}: fragment ${f.id} has row id sequences without stable row ids`);
    }
    if (v === 1 && fx.big) {
      if (m.fragments.length < fx.big.minFragments) throw new Error(`${where}: ${m.fragments.length} fragments, want ≥ ${fx.big.minFragments}`);
      for (const f of m.fragments) {
        if (f.physicalRows > BigInt(fx.big.maxFragmentRows)) throw new Error(`${where}: fragment ${f.id} has ${f.physicalRows} rows`);
      }
    }
  }
  const want = expectedFooter(fx.storageVersion);
  const dataDir = path.join(tableDir, "data");
  for (const name of fs.readdirSync(dataDir)) {
    const got = dataFileVersion(path.join(dataDir, name));
    if (got.major !== want.major || got.minor !== want.minor) {
      throw new Error(`${fx.name}: data file ${name} footer ${got.major}.${got.minor}, want ${want.major}.${want.minor}`);
    }
  }
  const delDir = path.join(tableDir, "_deletions");
  const dels = fs.existsSync(delDir) ? fs.readdirSync(delDir) : [];
  for (const ext of fx.deletions) {
    if (!dels.some((n) => n.endsWith("." + ext))) throw new Error(`${fx.name}: no .${ext} file in _deletions/ (found [${dels}])`);
  }
  return { naming, versions: nums };
}
