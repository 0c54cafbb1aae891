#!/usr/bin/env node
// Launcher of the terse binary. npm installs exactly one of the optional
// per-platform packages (@terse-dev/terse-<os>-<cpu>, chosen by their "os"
// and "cpu" fields); this script finds its binary and runs it with the
// same arguments, standard streams and exit status.
"use strict";

const { spawnSync } = require("child_process");
const path = require("path");

const pkg = `@terse-dev/terse-${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "terse.exe" : "terse";

let bin;
try {
  bin = require.resolve(`${pkg}/bin/${exe}`);
} catch (e) {
  process.stderr.write(
    `terse: no binary for ${process.platform}-${process.arch}: the package ${pkg} is not installed.\n` +
      `Reinstall without --omit=optional (or --no-optional), or install terse with "go install".\n`
  );
  process.exit(1);
}

const r = spawnSync(bin, process.argv.slice(2), { stdio: "inherit" });
if (r.error) {
  process.stderr.write(`terse: running ${bin}: ${r.error.message}\n`);
  process.exit(1);
}
if (r.signal) {
  process.kill(process.pid, r.signal);
}
process.exit(r.status === null ? 1 : r.status);
