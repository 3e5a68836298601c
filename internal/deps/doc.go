// Package deps keeps the code in the shape ARCHITECTURE.md draws. table.go is the architecture's
// package table as data, one row per package in the table's order (from the ground floor up),
// with the part of each row's "must not" that an import graph can express: which graftrl
// packages it may or must not import, whether it may depend on GoMLX, who may import it, and no
// init functions or assembly where the row says so. The test builds the module's import graph
// with one go list call and go/parser (every file, whatever its build constraints), checks it
// against the table (check), and fails on a package without a row, a row whose package is gone,
// or an import of a later row. Nothing imports this package; only its test runs.
package deps
