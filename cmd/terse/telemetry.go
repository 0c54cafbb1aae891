package main

import (
	"github.com/terse-dev/terse/config"
	"github.com/terse-dev/terse/telemetry"
)

// openTelemetry opens the recorder the config's [telemetry] section asks
// for: nil (records nothing) when it is off. Every entry point opens its
// recorder here, the one place the section becomes telemetry.Settings
// (the two types have the same fields, so a field added to one and not
// the other fails to compile here).
func openTelemetry(cfg *config.Config) (*telemetry.Recorder, error) {
	return telemetry.Open(telemetry.Settings(cfg.Telemetry))
}
