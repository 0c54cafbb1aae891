//go:build !race

package toon_test

const raceEnabled = false
