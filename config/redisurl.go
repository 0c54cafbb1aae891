package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// checkRedisURL reports whether s is a Redis URL the Redis store accepts:
// the rules of go-redis's ParseURL (schemes, database number, socket path,
// the query options it knows and their value types), checked here so that
// validating a configuration does not link the Redis client. FuzzRedisURL
// holds it to the store's own check. The error never repeats s, which may
// hold a password.
func checkRedisURL(s string) error {
	if s == "" {
		return errors.New("Redis URL is empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // url.Error repeats the URL
		}
		return fmt.Errorf("bad Redis URL: %v", err)
	}
	if err := checkRedisTarget(u); err != nil {
		msg := err.Error()
		if p, ok := u.User.Password(); ok && p != "" {
			// A part of the URL the error names (an option, a path) may
			// hold the password's text.
			msg = strings.ReplaceAll(msg, p, "***")
		}
		return fmt.Errorf("bad Redis URL: redis: %s", msg)
	}
	return nil
}

// redisOptions are the query options go-redis reads from a URL, by the
// type of their value.
var redisOptions = map[string]byte{
	"db": 'i', "protocol": 'i', "client_name": 's', "max_retries": 'i',
	"min_retry_backoff": 'd', "max_retry_backoff": 'd', "dial_timeout": 'd',
	"read_timeout": 'd', "write_timeout": 'd', "pool_fifo": 'b', "pool_size": 'i',
	"pool_timeout": 'd', "min_idle_conns": 'i', "max_idle_conns": 'i',
	"max_active_conns": 'i', "max_concurrent_dials": 'i', "pipeline_pool_size": 'i',
	"pipeline_read_buffer_size": 'i', "pipeline_write_buffer_size": 'i',
	"conn_max_idle_time": 'd', "idle_timeout": 'd', "conn_max_lifetime": 'd',
	"max_conn_age": 'd', "conn_max_lifetime_jitter": 'd', "skip_verify": 'b',
}

func checkRedisTarget(u *url.URL) error {
	switch u.Scheme {
	case "redis", "rediss":
		f := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
		switch len(f) {
		case 0:
		case 1:
			if _, err := strconv.Atoi(f[0]); err != nil {
				return errors.New("invalid database number in the path")
			}
		default:
			return errors.New("invalid URL path: more than a database number")
		}
	case "unix":
		if strings.TrimSpace(u.Path) == "" {
			return errors.New("empty unix socket path")
		}
	default:
		// The scheme is named unless it holds the password's text: an
		// error never shows a credential.
		if pw, _ := u.User.Password(); pw != "" && strings.Contains(u.Scheme, pw) {
			return errors.New("invalid URL scheme (want redis, rediss or unix)")
		}
		return fmt.Errorf("invalid URL scheme: %s", u.Scheme)
	}
	q := u.Query()
	// Aliases are read only when the newer name is absent; skip_verify
	// only with TLS. Anything not read is an unexpected option.
	skip := map[string]bool{"skip_verify": u.Scheme != "rediss"}
	if len(q["conn_max_idle_time"]) > 0 {
		skip["idle_timeout"] = true
	}
	if len(q["conn_max_lifetime"]) > 0 {
		skip["max_conn_age"] = true
	}
	var unexpected []string
	var firstErr error
	for _, name := range sortedKeys(q) {
		kind, known := redisOptions[name]
		if !known || skip[name] {
			unexpected = append(unexpected, name)
			continue
		}
		vs := q[name]
		if len(vs) == 0 || firstErr != nil {
			continue
		}
		if err := checkRedisOption(name, kind, vs[len(vs)-1]); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if len(unexpected) > 0 {
		return fmt.Errorf("unexpected option: %s", strings.Join(unexpected, ", "))
	}
	return nil
}

// checkRedisOption checks one query option's value as go-redis reads it.
func checkRedisOption(name string, kind byte, s string) error {
	if s == "" {
		return nil
	}
	switch kind {
	case 'i':
		if _, err := strconv.Atoi(s); err != nil {
			if name == "db" {
				return fmt.Errorf("invalid database number: %w", err)
			}
			return fmt.Errorf("invalid %s number: %s", name, err)
		}
	case 'd':
		if _, err := strconv.Atoi(s); err == nil {
			return nil
		}
		if _, err := time.ParseDuration(s); err != nil {
			return fmt.Errorf("invalid %s duration: %w", name, err)
		}
	case 'b':
		switch s {
		case "true", "1", "false", "0":
		default:
			return fmt.Errorf("invalid %s boolean: expected true/false/1/0 or an empty string, got %q", name, s)
		}
	}
	return nil
}

func sortedKeys(q url.Values) []string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
