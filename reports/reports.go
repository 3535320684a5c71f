// Package reports holds the dashboard's templates and assets, embedded in the binary so
// `walkfuzz report` renders the same page from any directory.
package reports

import "embed"

// FS holds dashboard.html.tmpl, bucket.html.tmpl, charts.html.tmpl, style.css and dashboard.js.
//
//go:embed *.tmpl style.css dashboard.js
var FS embed.FS
