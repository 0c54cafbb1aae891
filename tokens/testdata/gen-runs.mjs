// gen-runs.mjs writes run-counts.json: the o200k_base and cl100k_base
// counts of long runs of one unit (a character or a short string) repeated
// n times, from js-tiktoken and OpenAI's tiktoken (WebAssembly build of the
// Rust library), which must agree. Each row is [unit, n, o200k, cl100k];
// the test builds the text as unit repeated n times.
//
// Run it once from a scratch folder outside the repository (see
// gen-counts.mjs for the npm install):
//
//	cd /tmp/tokref && node /work/main/tokens/testdata/gen-runs.mjs \
//	    > /work/main/tokens/testdata/run-counts.json
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(join(process.cwd(), "noop.js"));
const { getEncoding } = require("js-tiktoken");
const { get_encoding } = require("tiktoken");

const units = [
  "a", "A", "z", " ", "\n", "\t", "!", "=", "-", "0", "é", "日", "😀",
  "ab", "aB", "Ab", "xyz", "ha", "\r\n", "==", "-=", "日本", "a\u0301",
  "\\u00", "deadbeef", "abc123", "ſ", "\u00a0",
];
const lengths = [1, 2, 3, 7, 8, 15, 16, 31, 64, 127, 128, 129, 200, 255,
  256, 257, 511, 1000, 1023, 2049];

const names = ["o200k_base", "cl100k_base"];
const js = names.map((n) => getEncoding(n));
const wasm = names.map((n) => get_encoding(n));
const rows = [];
for (const u of units) {
  for (const n of lengths) {
    const s = u.repeat(n);
    const counts = names.map((name, e) => {
      const a = js[e].encode(s, [], []).length;
      const b = wasm[e].encode(s, [], []).length;
      if (a !== b) {
        console.error(`${JSON.stringify(u)}×${n}: ${name}: js-tiktoken ${a}, tiktoken ${b}`);
        process.exit(1);
      }
      return a;
    });
    rows.push(JSON.stringify([u, n, ...counts]));
  }
}
process.stdout.write("[\n" + rows.join(",\n") + "\n]\n");
