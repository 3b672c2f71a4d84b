package store

// MaxDepth is the deepest a document may sit in the tree: a root document has depth 1.
const MaxDepth = 8
