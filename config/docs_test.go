package config

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestDocs keeps docs/config.md honest: its example parses and validates,
// and every key of the schema is documented.
func TestDocs(t *testing.T) {
	data, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	ex := regexp.MustCompile("(?s)```toml\n(.*?)```").FindStringSubmatch(doc)
	if ex == nil {
		t.Fatal("docs/config.md has no ```toml example")
	}
	c, err := Parse([]byte(ex[1]), "docs/config.md example")
	if err != nil {
		t.Fatalf("example: %v", err)
	}
	if c.Tool("github__list_issues") == nil || c.Tool("pod_logs") == nil {
		t.Errorf("example tools not found")
	}
	// Every other example that sets a key parses too.
	for _, m := range regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(doc, -1)[1:] {
		if _, err := Parse([]byte(m[1]), "docs/config.md"); err != nil {
			t.Errorf("example %q: %v", m[1], err)
		}
	}
	for _, key := range schemaKeys(reflect.TypeFor[Config](), "") {
		if !strings.Contains(doc, "`"+key+"`") {
			t.Errorf("docs/config.md does not document `%s`", key)
		}
	}
}

// schemaKeys lists the dotted TOML keys of t (arrays of tables and
// inline tables included).
func schemaKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := prefix + name
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[Duration]() {
			keys = append(keys, schemaKeys(ft, key+".")...)
			continue
		}
		keys = append(keys, key)
	}
	return keys
}
