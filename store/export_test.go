package store

// ParseWritten is parseWritten for the tests of package store_test.
var ParseWritten = parseWritten

// PlainString, PlainYAML, YAMLWord and YAMLWords are the tests of a plain YAML string and
// the expressions they stand for.
var (
	PlainString = plainString
	PlainYAML   = plainYAML
	YAMLWord    = yamlWord
	YAMLWords   = yamlWords
)
