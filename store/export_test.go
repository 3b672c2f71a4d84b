package store

// ParseWritten is parseWritten for the tests of package store_test.
var ParseWritten = parseWritten
