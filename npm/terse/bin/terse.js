#!/usr/bin/env node
// Launcher of the terse binary. npm installs exactly one of the optional
// per-platform packages (@terse-dev/terse-<os>-<cpu>, chosen by their "os"
// and "cpu" fields); this script finds its binary and runs it with the
// same arguments and standard streams. It passes on the signals a process
// manager sends (SIGTERM from systemd or docker stop, SIGINT, SIGHUP), so
// that "terse api" or "terse gateway" stops with it and frees its port,
// and ends as the binary ended: with its exit status, or killed by the
// same signal.
"use strict";

const { spawn } = require("child_process");

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

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit" });

// A signal to the launcher goes to the binary, which decides what it
// means (terse drains its servers on SIGINT and SIGTERM). A Ctrl-C at a
// terminal reaches both already; terse treats the second one the same.
const forwarded = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"];
const relay = {};
for (const sig of forwarded) {
  relay[sig] = () => {
    try {
      child.kill(sig);
    } catch (e) {
      // the binary is gone already; its exit ends the launcher
    }
  };
  process.on(sig, relay[sig]);
}

child.on("error", (err) => {
  process.stderr.write(`terse: running ${bin}: ${err.message}\n`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // End the way the binary ended: killed by the same signal.
    if (relay[signal]) process.removeListener(signal, relay[signal]);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
