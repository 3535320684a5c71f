package report

import (
	"context"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/walkfuzz/walkfuzz/reports"
)

var funcs = template.FuncMap{
	"f1":    func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"add":   func(a, b float64) float64 { return a + b },
	"pct":   pct,
	"pct3":  func(v float64) string { return fmt.Sprintf("%.3f%%", 100*v) },
	"nanos": Nanos,
	"si":    si,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04")
	},
	"unix":       func(t time.Time) int64 { return t.Unix() },
	"join":       func(xs []string) string { return strings.Join(xs, ", ") },
	"upper":      strings.ToUpper,
	"biasedNote": func() string { return BiasedNote },
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// Nanos prints a duration in ns as ns, µs or ms.
func Nanos(ns uint64) string {
	switch {
	case ns == 0:
		return "—"
	case ns < 1000:
		return fmt.Sprintf("%dns", ns)
	case ns < 1_000_000:
		return fmt.Sprintf("%.3gµs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%.3gms", float64(ns)/1e6)
}

// si prints a count with a k, M or G suffix; templates pass uint64, int or float64.
func si(v any) string {
	var f float64
	switch x := v.(type) {
	case uint64:
		f = float64(x)
	case int:
		f = float64(x)
	case float64:
		f = x
	}
	switch {
	case f >= 1e9:
		return fmt.Sprintf("%.2fG", f/1e9)
	case f >= 1e6:
		return fmt.Sprintf("%.2fM", f/1e6)
	case f >= 1e4:
		return fmt.Sprintf("%.1fk", f/1e3)
	}
	return fmt.Sprintf("%.0f", f)
}

func parse(page string) (*template.Template, error) {
	return template.New(page).Funcs(funcs).ParseFS(reports.FS, page, "charts.html.tmpl")
}

func assets() (template.CSS, template.JS, error) {
	css, err := reports.FS.ReadFile("style.css")
	if err != nil {
		return "", "", err
	}
	js, err := reports.FS.ReadFile("dashboard.js")
	if err != nil {
		return "", "", err
	}
	return template.CSS(css), template.JS(js), nil
}

// Write renders the dashboard into dir: index.html and buckets/<bucket>.html, each a
// self-contained page. It returns the path of index.html.
func Write(dir string, m *Model) (string, error) { return WriteContext(context.Background(), dir, m) }

// WriteContext is Write that stops between two pages once ctx ends (an interrupted report):
// every page is written whole or not at all, and index.html last.
func WriteContext(ctx context.Context, dir string, m *Model) (string, error) {
	css, js, err := assets()
	if err != nil {
		return "", err
	}
	index, err := parse("dashboard.html.tmpl")
	if err != nil {
		return "", fmt.Errorf("report template: %v", err)
	}
	bucket, err := parse("bucket.html.tmpl")
	if err != nil {
		return "", fmt.Errorf("report template: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "buckets"), 0o755); err != nil {
		return "", fmt.Errorf("%v: choose another --out", err)
	}
	for i := range m.Buckets {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		b := &m.Buckets[i]
		data := struct {
			B         *Bucket
			Generated time.Time
			CSS       template.CSS
			JS        template.JS
		}{b, m.Generated, css, js}
		if err := render(bucket, filepath.Join(dir, b.Page), data); err != nil {
			return "", err
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "index.html")
	data := struct {
		M   *Model
		CSS template.CSS
		JS  template.JS
	}{m, css, js}
	return out, render(index, out, data)
}

func render(t *template.Template, path string, data any) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("%v: choose another --out", err)
	}
	err = t.Execute(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}
