package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/walkfuzz/walkfuzz/harness/walkclass"
)

// Charts are inline SVG: the geometry is computed here and the templates only place it,
// so the page draws without JavaScript and without the network.

const (
	chartW = 640.0
	labelW = 120.0
	plotW  = chartW - labelW - 20
)

// Seg is a rectangle with a tooltip.
type Seg struct {
	X, Y, W, H float64
	Color      string
	Title      string
}

// Legend is a coloured key.
type Legend struct {
	X, Y         float64
	Color, Label string
}

// Tick is an axis mark.
type Tick struct {
	X, Y  float64
	Label string
}

// Label is text placed at a point.
type Label struct {
	X, Y float64
	Text string
}

// StackChart shows each walker's walks split by outcome class, 0..100%.
type StackChart struct {
	Width, Height float64
	PlotX, PlotY  float64
	PlotW, PlotH  float64
	Labels        []Label
	Segs          []Seg
	Legend        []Legend
	Ticks         []Tick
}

// classColors: green for complete, warm for the walker's own failures, neutral for the rest.
var classColors = []struct{ name, color string }{
	{"complete", "#2e9d4f"}, {"error", "#d9534f"}, {walkclass.TruncatedDepth, "#f0ad4e"},
	{walkclass.TruncatedShort, "#e8d44d"}, {walkclass.Invalid, "#8e44ad"}, {"mismatch", "#34495e"}, {"other", "#b0b0b0"},
}

func classChart(ws []WalkerStats) *StackChart {
	if len(ws) == 0 {
		return nil
	}
	const rowH, gap, top = 22.0, 10.0, 10.0
	c := &StackChart{Width: chartW, PlotX: labelW, PlotY: top, PlotW: plotW}
	c.PlotH = float64(len(ws))*(rowH+gap) - gap
	for i, w := range ws {
		y := top + float64(i)*(rowH+gap)
		c.Labels = append(c.Labels, Label{X: labelW - 8, Y: y + rowH/2 + 4, Text: w.Walker})
		shares := []float64{w.Complete, w.Errors, w.TruncDepth, w.TruncShort, w.Invalid, w.Mismatch}
		rest := 1.0
		for _, s := range shares {
			rest -= s
		}
		if w.Walks == 0 {
			rest = 0
		}
		shares = append(shares, math.Max(rest, 0))
		x := labelW
		for k, s := range shares {
			if s <= 0 {
				continue
			}
			wd := s * plotW
			c.Segs = append(c.Segs, Seg{X: x, Y: y, W: wd, H: rowH, Color: classColors[k].color,
				Title: fmt.Sprintf("%s %s: %.2f%% of %d walks", w.Walker, classColors[k].name, 100*s, w.Walks)})
			x += wd
		}
	}
	for p := 0; p <= 100; p += 25 {
		c.Ticks = append(c.Ticks, Tick{X: labelW + float64(p)/100*plotW, Y: top + c.PlotH + 14, Label: fmt.Sprintf("%d%%", p)})
	}
	ly := top + c.PlotH + 34
	for k, cc := range classColors {
		c.Legend = append(c.Legend, Legend{X: labelW + float64(k%4)*125, Y: ly + float64(k/4)*16, Color: cc.color, Label: cc.name})
	}
	c.Height = ly + 2*16 + 6
	return c
}

// BarChart is grouped horizontal bars: one group per row label, one bar per walker.
type BarChart struct {
	Width, Height float64
	Labels        []Label
	Bars          []Seg
	Legend        []Legend
	Ticks         []Tick
	AxisY         float64
}

func errorChart(ws []WalkerStats, rows []ErrorRow) *BarChart {
	if len(rows) == 0 || len(ws) == 0 {
		return nil
	}
	barH := 9.0
	groupH := float64(len(ws))*barH + 8
	top := 8.0
	top0 := top
	peak := 0.0
	for _, r := range rows {
		for _, s := range r.Shares {
			peak = math.Max(peak, s)
		}
	}
	scale, steps := niceCeil(peak)
	c := &BarChart{Width: chartW}
	for i, r := range rows {
		y := top + float64(i)*groupH
		c.Labels = append(c.Labels, Label{X: labelW - 8, Y: y + groupH/2 + 1, Text: shorten(strings.TrimPrefix(r.Class, walkclass.ErrorPrefix), 19)})
		for k, s := range r.Shares {
			c.Bars = append(c.Bars, Seg{X: labelW, Y: y + float64(k)*barH, W: math.Max(s/scale*plotW, 0.5), H: barH - 1,
				Color: ws[k].Color, Title: fmt.Sprintf("%s %s: %.3f%% (%d walks)", ws[k].Walker, r.Class, 100*s, r.Counts[k])})
		}
	}
	c.AxisY = top0 + float64(len(rows))*groupH
	for k := 0; k <= steps; k++ {
		v := scale * float64(k) / float64(steps)
		c.Ticks = append(c.Ticks, Tick{X: labelW + float64(k)/float64(steps)*plotW, Y: c.AxisY + 14, Label: strconv.FormatFloat(100*v, 'g', 3, 64) + "%"})
	}
	c.Legend = walkerLegend(ws, c.AxisY+32)
	c.Height = c.AxisY + 44
	return c
}

func walkerLegend(ws []WalkerStats, y float64) []Legend {
	var out []Legend
	for i, w := range ws {
		out = append(out, Legend{X: labelW + float64(i)*110, Y: y, Color: w.Color, Label: w.Walker})
	}
	return out
}

// RangeChart shows each walker's latency: p50 dot, p50..p99 bar, max tick, on a log axis.
type RangeChart struct {
	Width, Height float64
	Rows          []RangeRow
	Ticks         []Tick
	AxisY         float64
}

// RangeRow is one walker's latency marks.
type RangeRow struct {
	Label            Label
	Y                float64
	P50X, P99X, MaxX float64
	Color, Title     string
}

func latencyChart(ws []WalkerStats) *RangeChart {
	var peak uint64
	for _, w := range ws {
		peak = max(peak, w.Max, w.P99)
	}
	if peak == 0 {
		return nil
	}
	lo, hi := 2.0, math.Ceil(math.Log10(float64(peak))+0.01) // 100ns .. the next power of ten
	x := func(ns uint64) float64 {
		v := math.Log10(math.Max(float64(ns), 100))
		return labelW + (v-lo)/(hi-lo)*plotW
	}
	c := &RangeChart{Width: chartW}
	const rowH = 24.0
	for i, w := range ws {
		if w.P50 == 0 {
			continue
		}
		y := 10 + float64(i)*rowH + rowH/2
		c.Rows = append(c.Rows, RangeRow{Label: Label{X: labelW - 8, Y: y + 4, Text: w.Walker}, Y: y,
			P50X: x(w.P50), P99X: x(w.P99), MaxX: x(w.Max), Color: w.Color,
			Title: fmt.Sprintf("%s: p50 %s, p99 %s, max %s", w.Walker, Nanos(w.P50), Nanos(w.P99), Nanos(w.Max))})
	}
	c.AxisY = 10 + float64(len(ws))*rowH + 4
	for p := lo; p <= hi; p++ {
		c.Ticks = append(c.Ticks, Tick{X: labelW + (p-lo)/(hi-lo)*plotW, Y: c.AxisY + 14, Label: Nanos(uint64(math.Pow(10, p)))})
	}
	c.Height = c.AxisY + 24
	return c
}

// LineChart is the trend: one line per walker over nights (or days).
type LineChart struct {
	Width, Height float64
	PlotX, PlotY  float64
	PlotW, PlotH  float64
	Series        []Series
	XLabels       []Tick
	YTicks        []Tick
	Legend        []Legend
	Caption       string
}

// Series is one walker's line.
type Series struct {
	Name, Color string
	Points      string // SVG polyline points
	Dots        []Dot
}

// Dot is a point with a tooltip.
type Dot struct {
	X, Y  float64
	Title string
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// niceCeil rounds a share up to 1, 2 or 5 times a power of ten (at least 0.1%) and says
// how many steps divide it into round numbers.
func niceCeil(v float64) (float64, int) {
	if v <= 0.001 {
		return 0.001, 5
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []struct {
		f     float64
		steps int
	}{{1, 5}, {2, 4}, {5, 5}} {
		if v <= m.f*p*(1+1e-9) {
			return m.f * p, m.steps
		}
	}
	return 10 * p, 5
}
