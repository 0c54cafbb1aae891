// gen-random.mjs writes random-counts.json: short random strings over an
// alphabet of every character class tiktoken's split patterns distinguish
// (cased, modifier and other letters, marks, numbers, Unicode white space,
// contraction letters with ſ and K, symbols, emoji), each with its
// o200k_base and cl100k_base counts from js-tiktoken and OpenAI's tiktoken
// (WebAssembly build of the Rust library). The counts are tiktoken's;
// js-tiktoken is only compared, since JavaScript's regexps differ from
// Rust's on a few of these characters (\s holds U+FEFF but not U+0085, and
// (?i) is spelled out without ſ), and disagreements go to stderr.
// The strings are fixed by the seed, so reruns give the same file.
//
// Run it once from a scratch folder outside the repository (see
// gen-counts.mjs for the npm install):
//
//	cd /tmp/tokref && node /work/main/tokens/testdata/gen-random.mjs \
//	    > /work/main/tokens/testdata/random-counts.json
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(join(process.cwd(), "noop.js"));
const { getEncoding } = require("js-tiktoken");
const { get_encoding } = require("tiktoken");

const alphabet = [...(
  "azAZsStTrReEvVmMlLdD" + "ſK" + "ßéΣσǅᾈ" + "ʰー々" + "日קاก" +
  "\u0301\u0308\u093f\u20dd" + "09٣Ⅻ²½" +
  " \t\n\r\v\f\u0085\u00a0\u2028\u3000\ufeff\u200b" +
  "'/.,!-_\"{}<|>$😀\u200d\x7f\x00"
)];

let state = 0x2545f491;
function rand(n) { // xorshift32
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state % n;
}

const names = ["o200k_base", "cl100k_base"];
const js = names.map((n) => getEncoding(n));
const wasm = names.map((n) => get_encoding(n));
const rows = [];
for (let i = 0; i < 2000; i++) {
  let s = "";
  for (let k = rand(17); k > 0; k--) s += alphabet[rand(alphabet.length)];
  const counts = names.map((n, e) => {
    const a = js[e].encode(s, [], []).length;
    const b = wasm[e].encode(s, [], []).length;
    if (a !== b) {
      console.error(`${JSON.stringify(s)}: ${n}: js-tiktoken ${a}, tiktoken ${b}`);
    }
    return b;
  });
  rows.push(JSON.stringify([s, ...counts]));
}
process.stdout.write("[\n" + rows.join(",\n") + "\n]\n");
