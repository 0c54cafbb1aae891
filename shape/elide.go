package shape

// elideHead opens an elided text. Its wording is part of the API.
const elideHead = "> [elided: "

// fetchPlaceholder stands for the fetch command in an elision until
// Options.Keep has stored the original.
const fetchPlaceholder = "\x00fetch\x00"

func elideTest(text string) (candidate, bool) { return candidate{}, false }

func elideLog(text string) (candidate, bool) { return candidate{}, false }
