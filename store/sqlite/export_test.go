package sqlite

// StreamPage lets the external tests stream in pages of a few rows.
var StreamPage = &streamPage
