package toon

// CanonicalNumber exposes the canonical number form to the external tests.
var CanonicalNumber = canonicalNumber
