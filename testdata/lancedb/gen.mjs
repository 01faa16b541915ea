// Fixture generator: creates real LanceDB tables with scripted histories and
// writes LanceDB's own answers for every version beside each table.
//
//   node gen.mjs --out DIR [--only a,b] [--force] [--no-answers]
//   node gen.mjs --list
//   node gen.mjs --self-test
//
// Without --only it generates the committed fixtures (testdata/fixtures);
// big_stable and bench_5m are generated only when named. One JSON summary
// line per fixture goes to stdout.
import fs from "node:fs";
import path from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { FIXTURES } from "./lib/fixtures.mjs";
import { generate } from "./lib/generate.mjs";
import { selfTest } from "./lib/selftest.mjs";

function parseArgs(argv) {
  const a = { out: null, only: null, list: false, force: false, answers: true, selfTest: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    switch (k) {
      case "--out": a.out = val(); break;
      case "--only": a.only = [...new Set(val().split(",").map((s) => s.trim()).filter(Boolean))]; break;
      case "--list": a.list = true; break;
      case "--force": a.force = true; break;
      case "--no-answers": a.answers = false; break;
      case "--self-test": a.selfTest = true; break;
      default: throw new Error(`unknown argument ${k}`);
    }
  }
  return a;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.selfTest) {
    await selfTest();
    console.log("self-test ok");
    return;
  }
  if (args.list) {
    for (const fx of FIXTURES) console.log(`${fx.name}\t${fx.committed ? "committed" : "test-time"}`);
    return;
  }
  if (!args.out) throw new Error("--out DIR is required (or --list / --self-test)");
  let chosen = FIXTURES.filter((f) => f.committed);
  if (args.only) {
    const known = new Map(FIXTURES.map((f) => [f.name, f]));
    for (const n of args.only) if (!known.has(n)) throw new Error(`unknown fixture ${n}; see --list`);
    chosen = args.only.map((n) => known.get(n));
  }
  fs.mkdirSync(args.out, { recursive: true });
  for (const fx of chosen) {
    const tableDir = path.join(args.out, `${fx.name}.lance`);
    const answersFile = path.join(args.out, `${fx.name}.answers.json`);
    if (fs.existsSync(tableDir) || fs.existsSync(answersFile)) {
      if (!args.force) throw new Error(`${tableDir} or its answers already exist; delete them or pass --force`);
      fs.rmSync(tableDir, { recursive: true, force: true });
      fs.rmSync(answersFile, { force: true });
    }
  }
  const db = await lancedb.connect(args.out);
  for (const fx of chosen) {
    const summary = await generate(db, args.out, fx, { answers: args.answers, version: lancedbVersion() });
    console.log(JSON.stringify(summary));
  }
}

function lancedbVersion() {
  const pkg = new URL("./node_modules/@lancedb/lancedb/package.json", import.meta.url);
  return JSON.parse(fs.readFileSync(pkg, "utf8")).version;
}

main().catch((e) => {
  console.error(`gen.mjs: ${e.stack || e}`);
  process.exit(1);
});
