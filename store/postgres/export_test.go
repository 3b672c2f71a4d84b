package postgres

// StreamPage lets the external tests stream in pages of a few rows.
var StreamPage = &streamPage

// ScanShare lets the external tests force either plan of a streamed search.
var ScanShare = &scanShare

// PagePlan is what a page of a stream without a search runs before its query.
const PagePlan = pagePlan
