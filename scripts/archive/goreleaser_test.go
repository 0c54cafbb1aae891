package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestGoreleaserTargets checks that .goreleaser.yaml builds linux, darwin
// and windows on amd64 and arm64 with a checksums file, and that
// scripts/dist.sh, which stands in for goreleaser where it is not
// installed, builds exactly those targets.
func TestGoreleaserTargets(t *testing.T) {
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `yaml:"version"`
		Builds  []struct {
			Main   string   `yaml:"main"`
			Goos   []string `yaml:"goos"`
			Goarch []string `yaml:"goarch"`
		} `yaml:"builds"`
		Archives []struct {
			NameTemplate string `yaml:"name_template"`
		} `yaml:"archives"`
		Checksum struct {
			NameTemplate string `yaml:"name_template"`
			Algorithm    string `yaml:"algorithm"`
		} `yaml:"checksum"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 2 || len(cfg.Builds) != 1 || cfg.Builds[0].Main != "./cmd/terse" {
		t.Fatalf("want one goreleaser v2 build of ./cmd/terse, got %+v", cfg)
	}
	var want []string
	for _, os := range cfg.Builds[0].Goos {
		for _, arch := range cfg.Builds[0].Goarch {
			want = append(want, os+"/"+arch)
		}
	}
	slices.Sort(want)
	if got := strings.Join(want, " "); got != "darwin/amd64 darwin/arm64 linux/amd64 linux/arm64 windows/amd64 windows/arm64" {
		t.Errorf("goreleaser targets %s", got)
	}
	if cfg.Checksum.NameTemplate != "checksums.txt" || cfg.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum %+v, want checksums.txt, sha256", cfg.Checksum)
	}
	if len(cfg.Archives) != 1 || cfg.Archives[0].NameTemplate != "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}" {
		t.Errorf("archive names %+v: scripts/dist.sh writes terse_VERSION_OS_ARCH", cfg.Archives)
	}

	script, err := os.ReadFile("../dist.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^targets="([^"]*)"`).FindSubmatch(script)
	if m == nil {
		t.Fatal(`scripts/dist.sh: no targets="..." line`)
	}
	got := strings.Fields(string(m[1]))
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("scripts/dist.sh builds %v, .goreleaser.yaml %v", got, want)
	}
}
