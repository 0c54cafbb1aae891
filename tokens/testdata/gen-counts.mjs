// gen-counts.mjs writes corpus-counts.tsv: the o200k_base and cl100k_base
// token counts of every file in the corpus, from independent reference
// implementations (js-tiktoken, pure JavaScript, and tiktoken, OpenAI's Rust
// tiktoken compiled to WebAssembly). It stops if the two disagree.
//
// Run it once from a scratch folder outside the repository:
//
//	mkdir -p /tmp/tokref && cd /tmp/tokref && npm init -y &&
//	npm install js-tiktoken@1.0.21 tiktoken@1.0.22 &&
//	node /work/main/tokens/testdata/gen-counts.mjs /work/shared/corpus \
//	    > /work/main/tokens/testdata/corpus-counts.tsv
//
// Output: a header line, then one line per file, sorted by path:
// path (relative to the corpus folder, / separated) TAB o200k_base TAB cl100k_base.
// Special-token text such as "<|endoftext|>" is encoded as ordinary text.
import { createRequire } from "node:module";
import { readFileSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";

const require = createRequire(join(process.cwd(), "noop.js"));
const { getEncoding } = require("js-tiktoken");
const { get_encoding } = require("tiktoken");

const root = process.argv[2];
if (!root) {
  console.error("usage: node gen-counts.mjs CORPUS_DIR > corpus-counts.tsv");
  process.exit(2);
}

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

const names = ["o200k_base", "cl100k_base"];
const js = names.map((n) => getEncoding(n));
const wasm = names.map((n) => get_encoding(n));
const files = walk(root)
  .map((f) => relative(root, f).split(sep).join("/"))
  .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)); // byte order, as Go sorts

const out = ["path\to200k_base\tcl100k_base"];
for (const f of files) {
  const text = readFileSync(join(root, f), "utf8");
  const counts = names.map((n, i) => {
    const a = js[i].encode(text, [], []).length;
    const b = wasm[i].encode(text, [], []).length;
    if (a !== b) {
      console.error(`${f}: ${n}: js-tiktoken ${a}, tiktoken ${b}`);
      process.exit(1);
    }
    return a;
  });
  out.push([f, ...counts].join("\t"));
}
process.stdout.write(out.join("\n") + "\n");
